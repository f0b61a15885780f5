/**
 * The fee window, shared by a fleet: the replica holding the fee lease follows blocks, and every
 * change it makes to its window (a block's prices and write locks, a run of skipped slots) goes into a
 * log, with its follower's progress. The other replicas replay the log into their own windows, so they
 * make no block reads and answer the same levels. The log is a Redis stream capped to about two windows.
 */
import type { Redis } from "../store/redis.ts";
import type { FollowerState } from "./block-follower.ts";
import type { PricedTransaction } from "./block-transactions.ts";
import type { FeeWindow } from "./fee-window.ts";

/** One change to the window, and the follower's progress just after it. */
export type WindowEntry =
  | {
      readonly kind: "block";
      readonly slot: bigint;
      readonly transactions: readonly PricedTransaction[];
      readonly state: FollowerState;
    }
  | { readonly kind: "advance"; readonly slot: bigint; readonly state: FollowerState };

/** Where the leader writes and the others read. */
export interface WindowLog {
  append(entries: readonly WindowEntry[]): Promise<void>;
  /** Entries after `cursor` (all there are, without one), and the cursor to read on from. */
  readAfter(cursor: string | undefined): Promise<{ entries: WindowEntry[]; cursor: string | undefined }>;
}

/** A change to the window, before the follower's state is attached. */
export type WindowChange =
  | { readonly kind: "block"; readonly slot: bigint; readonly transactions: readonly PricedTransaction[] }
  | { readonly kind: "advance"; readonly slot: bigint };

/** A window that also hands every change it accepts to `onChange`. */
export function recordingWindow(window: FeeWindow, onChange: (change: WindowChange) => void): FeeWindow {
  return {
    ...window,
    addBlock(slot, transactions) {
      const added = window.addBlock(slot, transactions);
      if (added) onChange({ kind: "block", slot, transactions });
      return added;
    },
    advanceTo(slot) {
      const before = window.version();
      window.advanceTo(slot);
      if (window.version() !== before) onChange({ kind: "advance", slot });
    },
  };
}

/** Replays entries into a window; returns the follower state of the last one (undefined for none). */
export function replay(window: FeeWindow, entries: readonly WindowEntry[]): FollowerState | undefined {
  let state: FollowerState | undefined;
  for (const entry of entries) {
    if (entry.kind === "block") window.addBlock(entry.slot, entry.transactions);
    else window.advanceTo(entry.slot);
    state = entry.state;
  }
  return state;
}

/** Options of {@link createRedisWindowLog}. */
export interface RedisWindowLogOptions {
  redis: Redis;
  /** The stream's key (one per chain). */
  key: string;
  /** About how many entries are kept (two windows: a replica that starts replays one whole window). */
  maxEntries: number;
}

/** The log as a Redis stream. Accounts are written once per block, prices as decimal strings. */
export function createRedisWindowLog(options: RedisWindowLogOptions): WindowLog {
  const { redis, key } = options;
  return {
    async append(entries) {
      if (entries.length === 0) return;
      await redis.run("publish fee blocks", (c) => {
        const multi = c.multi();
        for (const entry of entries) {
          multi.xAdd(
            key,
            "*",
            { e: encodeEntry(entry) },
            { TRIM: { strategy: "MAXLEN", strategyModifier: "~", threshold: options.maxEntries } },
          );
        }
        return multi.exec();
      });
    },
    async readAfter(cursor) {
      const rows = await redis.run("read fee blocks", (c) =>
        c.xRange(key, cursor === undefined ? "-" : `(${cursor}`, "+", { COUNT: options.maxEntries }),
      );
      return {
        entries: rows.map((row) => decodeEntry(String(row.message.e))),
        cursor: rows.length === 0 ? cursor : rows[rows.length - 1].id,
      };
    },
  };
}

interface EntryJson {
  k: "block" | "advance";
  s: string;
  /** Accounts of the block, each once. */
  a?: string[];
  /** Transactions: [price, indexes into `a`]. */
  t?: [string, number[]][];
  f: Record<string, string | number | boolean | null>;
}

const BIG_FIELDS = ["tipSlot", "nextSlot", "lastBlockSlot", "droppedSlots", "firstSlot"] as const;

function encodeState(state: FollowerState): EntryJson["f"] {
  const f: EntryJson["f"] = {
    consecutiveFailures: state.consecutiveFailures,
    refused: state.refused,
    lastBlockAt: state.lastBlockAt ?? null,
    lastMoveAt: state.lastMoveAt ?? null,
  };
  for (const name of BIG_FIELDS) f[name] = state[name] === undefined ? null : String(state[name]);
  return f;
}

function decodeState(f: EntryJson["f"]): FollowerState {
  const big = (name: (typeof BIG_FIELDS)[number]) =>
    f[name] === null || f[name] === undefined ? undefined : BigInt(f[name] as string);
  return {
    tipSlot: big("tipSlot"),
    nextSlot: big("nextSlot"),
    consecutiveFailures: Number(f.consecutiveFailures),
    refused: f.refused === true,
    lastError: undefined,
    lastBlockAt: typeof f.lastBlockAt === "number" ? f.lastBlockAt : undefined,
    lastBlockSlot: big("lastBlockSlot"),
    lastMoveAt: typeof f.lastMoveAt === "number" ? f.lastMoveAt : undefined,
    droppedSlots: big("droppedSlots") ?? 0n,
    firstSlot: big("firstSlot"),
  };
}

/** Serialises an entry for the stream. */
export function encodeEntry(entry: WindowEntry): string {
  const json: EntryJson = { k: entry.kind, s: String(entry.slot), f: encodeState(entry.state) };
  if (entry.kind === "block") {
    const index = new Map<string, number>();
    json.t = entry.transactions.map((tx) => [
      String(tx.price),
      tx.writable.map((address) => {
        let i = index.get(address);
        if (i === undefined) index.set(address, (i = index.size));
        return i;
      }),
    ]);
    json.a = [...index.keys()];
  }
  return JSON.stringify(json);
}

/** Reads an entry from the stream. */
export function decodeEntry(text: string): WindowEntry {
  const json = JSON.parse(text) as EntryJson;
  const state = decodeState(json.f);
  const slot = BigInt(json.s);
  if (json.k === "advance") return { kind: "advance", slot, state };
  const accounts = json.a ?? [];
  return {
    kind: "block",
    slot,
    state,
    transactions: (json.t ?? []).map(([price, writable]) => ({
      price: BigInt(price),
      writable: writable.map((i) => accounts[i]),
    })),
  };
}
