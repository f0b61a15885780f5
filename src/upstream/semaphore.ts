/**
 * A counting semaphore: at most `limit` holders at once, the rest wait in FIFO order.
 * The upstream uses it to cap concurrent calls to a provider, which rate-limits per connection.
 */
export interface Semaphore {
  /** Waits for a slot; the returned function gives it back (call it exactly once). */
  acquire(signal?: AbortSignal): Promise<() => void>;
  /** Slots in use now. */
  readonly active: number;
  /** Callers waiting for a slot now. */
  readonly waiting: number;
}

interface Waiter {
  grant: (release: () => void) => void;
  reject: (reason: unknown) => void;
  signal?: AbortSignal;
  onAbort?: () => void;
}

/** Creates a semaphore with `limit` slots (at least 1). */
export function createSemaphore(limit: number): Semaphore {
  if (!Number.isInteger(limit) || limit < 1)
    throw new RangeError(`semaphore limit must be a positive integer, got ${limit}`);
  let active = 0;
  const queue: Waiter[] = [];

  function makeRelease(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      // Hand the slot straight to the next waiter so `active` never dips and a newcomer cannot jump the queue.
      const next = queue.shift();
      if (next) {
        if (next.signal && next.onAbort) next.signal.removeEventListener("abort", next.onAbort);
        next.grant(makeRelease());
      } else {
        active--;
      }
    };
  }

  return {
    acquire(signal) {
      if (signal?.aborted) return Promise.reject(signal.reason);
      if (active < limit) {
        active++;
        return Promise.resolve(makeRelease());
      }
      return new Promise((resolve, reject) => {
        const waiter: Waiter = { grant: resolve, reject, signal };
        if (signal) {
          waiter.onAbort = () => {
            const index = queue.indexOf(waiter);
            if (index >= 0) queue.splice(index, 1);
            reject(signal.reason);
          };
          signal.addEventListener("abort", waiter.onAbort, { once: true });
        }
        queue.push(waiter);
      });
    },
    get active() {
      return active;
    },
    get waiting() {
      return queue.length;
    },
  };
}
