/**
 * Who is waiting on which signature: watch streams and confirm-and-wait sends. The status engine
 * tells this registry about each change once; the registry fans it out, so work per tick does not
 * grow with the number of watchers of a signature.
 */
import type { StatusRecord } from "./transaction-status.ts";

/** One event of a watch stream. */
export type WatchEvent =
  | { readonly kind: "record"; readonly record: StatusRecord }
  | { readonly kind: "heartbeat"; readonly slot: bigint };

/** One party waiting on a signature. */
export interface Watcher {
  /** Called with every new record of the signature. */
  onRecord(record: StatusRecord): void;
  /** Called when this watcher has been idle for a heartbeat interval (watch streams only). */
  onHeartbeat?(slot: bigint): void;
  /** When this watcher last received something (epoch ms); maintained by the registry. */
  lastEventAt: number;
}

/** The registry. */
export interface WatcherRegistry {
  add(signature: string, watcher: Watcher): void;
  /** Removes a watcher; returns how many remain on that signature. */
  remove(signature: string, watcher: Watcher): number;
  /** Fans a record out to the signature's watchers. */
  publish(record: StatusRecord): void;
  /** Sends heartbeats to watchers idle for at least `intervalMs`. */
  heartbeat(slot: bigint, intervalMs: number): void;
  /** Signatures with at least one watcher. */
  signatures(): IterableIterator<string>;
  has(signature: string): boolean;
  /** How many watchers there are in all. */
  size(): number;
}

/** Creates an empty registry. */
export function createWatcherRegistry(now: () => number = Date.now): WatcherRegistry {
  const bySignature = new Map<string, Set<Watcher>>();
  let count = 0;
  return {
    add(signature, watcher) {
      let set = bySignature.get(signature);
      if (set === undefined) bySignature.set(signature, (set = new Set()));
      if (!set.has(watcher)) count++;
      set.add(watcher);
      watcher.lastEventAt = now();
    },
    remove(signature, watcher) {
      const set = bySignature.get(signature);
      if (set === undefined) return 0;
      if (set.delete(watcher)) count--;
      if (set.size === 0) bySignature.delete(signature);
      return set.size;
    },
    publish(record) {
      const set = bySignature.get(record.signature);
      if (set === undefined) return;
      const t = now();
      // Copy: a watcher may remove itself while being told.
      for (const watcher of [...set]) {
        watcher.lastEventAt = t;
        watcher.onRecord(record);
      }
    },
    heartbeat(slot, intervalMs) {
      const t = now();
      for (const set of bySignature.values()) {
        for (const watcher of set) {
          if (watcher.onHeartbeat === undefined || t - watcher.lastEventAt < intervalMs) continue;
          watcher.lastEventAt = t;
          watcher.onHeartbeat(slot);
        }
      }
    },
    signatures: () => bySignature.keys(),
    has: (signature) => bySignature.has(signature),
    size: () => count,
  };
}

/** A one-consumer queue of events that an abort or `close()` ends. Heartbeats never pile up. */
export interface EventQueue<T> {
  push(item: T): void;
  /** Whether nothing is waiting to be taken. */
  isEmpty(): boolean;
  close(): void;
  next(): Promise<IteratorResult<T, undefined>>;
}

/** Creates an event queue. */
export function createEventQueue<T>(): EventQueue<T> {
  const items: T[] = [];
  let waiting: ((result: IteratorResult<T, undefined>) => void) | undefined;
  let closed = false;
  return {
    push(item) {
      if (closed) return;
      if (waiting !== undefined) {
        const resolve = waiting;
        waiting = undefined;
        resolve({ value: item, done: false });
      } else {
        items.push(item);
      }
    },
    isEmpty: () => items.length === 0,
    close() {
      closed = true;
      if (waiting !== undefined) {
        const resolve = waiting;
        waiting = undefined;
        resolve({ value: undefined, done: true });
      }
    },
    next() {
      if (items.length > 0) return Promise.resolve({ value: items.shift() as T, done: false });
      if (closed) return Promise.resolve({ value: undefined, done: true });
      return new Promise((resolve) => (waiting = resolve));
    },
  };
}
