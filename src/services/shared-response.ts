/**
 * Responses a service hands out to many calls unchanged (a read cached until the next slot): marked
 * here, so that a transport may encode one once and serve the bytes to every call that gets it
 * (the REST layer does: src/rest/rest-handler.ts). A marked message must never be mutated afterwards.
 */
const shared = new WeakSet<object>();

/** Marks `message` as shared and immutable; returns it. */
export function shareResponse<T extends object>(message: T): T {
  shared.add(message);
  return message;
}

/** Whether `message` was marked by {@link shareResponse}. */
export function isSharedResponse(message: object): boolean {
  return shared.has(message);
}
