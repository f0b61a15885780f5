/**
 * Knows which blockhashes are still valid and until which block height, calling the upstream as
 * little as possible: blockhashes seen through `getLatestBlockhash` are remembered with their
 * `lastValidBlockHeight`, and with a recent block height (noted by the status engine's ticks) a send
 * naming one of them is checked without any call.
 */
import type { GetLatestBlockhashApi, IsBlockhashValidApi, Rpc } from "@solana/kit";
import type { Blockhash } from "@solana/kit";
import { SolgateError } from "../errors.ts";
import { BoundedMap } from "../bounded-map.ts";

/** Blocks a blockhash stays valid after the block that made it (agave's MAX_PROCESSING_AGE). */
const MAX_PROCESSING_AGE = 150n;

/** Commitments a blockhash may be checked at. */
export type BlockhashCommitment = "processed" | "confirmed" | "finalized";

/** A blockhash with the last block height at which it is valid. */
export interface BlockhashLifetime {
  readonly blockhash: string;
  readonly lastValidBlockHeight: bigint;
}

/** What a check found. */
export interface BlockhashValidity {
  /** Exact when the blockhash was seen through `getLatestBlockhash`, else an upper bound. */
  readonly lastValidBlockHeight: bigint;
  readonly exact: boolean;
  /** The commitment at which the blockhash is known: the configured one, or `processed` for a very fresh one. */
  readonly commitment: "processed" | "confirmed";
}

/** Options of {@link createBlockhashCache}. */
export interface BlockhashCacheOptions {
  rpc: Rpc<GetLatestBlockhashApi & IsBlockhashValidApi>;
  /** The commitment blockhashes are fetched and checked at (default `confirmed`, as kit's clients use). */
  commitment?: "confirmed" | "processed";
  /** How many blockhashes to remember (default 512: more than a 150-block window). */
  maxEntries?: number;
  /** How long a noted block height is trusted to skip `isBlockhashValid` (default 2 s). */
  heightMaxAgeMs?: number;
  /** Blocks of safety between the noted height and a blockhash's last valid height for the no-call path (default 10). */
  heightMargin?: bigint;
  /** Clock, for tests. */
  now?: () => number;
}

/** The blockhash cache. */
export interface BlockhashCache {
  /** The latest blockhash at `commitment` (default: the configured one), reusing one fetched within `maxAgeMs` (default 0). */
  latest(options?: { maxAgeMs?: number; commitment?: BlockhashCommitment }): Promise<BlockhashLifetime>;
  /**
   * Checks that `blockhash` is still valid and says until when.
   * @throws SolgateError BLOCKHASH_EXPIRED when it is not (or never was) valid.
   */
  check(blockhash: string): Promise<BlockhashValidity>;
  /**
   * The check answered from what is already known (a blockhash seen through `getLatestBlockhash`, a
   * recent block height), without a call; undefined when only the node can say.
   * @throws SolgateError BLOCKHASH_EXPIRED when it is known to have lapsed.
   */
  cached(blockhash: string): BlockhashValidity | undefined;
  /** Whether the node still accepts `blockhash` (one `isBlockhashValid` call). */
  isValid(blockhash: string, commitment: BlockhashCommitment): Promise<boolean>;
  /**
   * Records the chain's block height (confirmed commitment), read by a call made `askedMsAgo` ms ago
   * (default 0). Its age counts from the question, not from when the answer was read: an answer that waited
   * while the event loop was busy is as old as the call.
   */
  noteBlockHeight(height: bigint, askedMsAgo?: number): void;
  /**
   * A block height the chain has reached (at the configured commitment): one noted recently, else the one a
   * `getLatestBlockhash` call tells. A lower bound of the height now, so "past a height" read from it is true.
   */
  blockHeight(): Promise<bigint>;
}

/** The error a send with a lapsed blockhash gets. */
export function blockhashExpired(blockhash: string, details: Record<string, unknown> = {}): SolgateError {
  return new SolgateError(
    "BLOCKHASH_EXPIRED",
    `blockhash ${blockhash} is no longer valid: fetch a fresh blockhash (getLatestBlockhash, or PrepareTransaction), rebuild the transaction, sign it again and resend`,
    { blockhash, ...details },
  );
}

/** Creates a blockhash cache over the upstream. */
export function createBlockhashCache(options: BlockhashCacheOptions): BlockhashCache {
  const { rpc } = options;
  const commitment = options.commitment ?? "confirmed";
  const maxEntries = options.maxEntries ?? 512;
  const heightMaxAgeMs = options.heightMaxAgeMs ?? 2000;
  const heightMargin = options.heightMargin ?? 10n;
  const now = options.now ?? Date.now;

  const known = new BoundedMap<string, bigint>(maxEntries);
  const latestByCommitment = new Map<BlockhashCommitment, { value: BlockhashLifetime; at: number }>();
  const latestInFlight = new Map<BlockhashCommitment, Promise<BlockhashLifetime>>();
  const checksInFlight = new Map<string, Promise<BlockhashValidity>>();
  let height: { value: bigint; at: number } | undefined;

  /** `value` is a lower bound of the height at `at` (when it was asked for), and so at any time after. */
  function noteHeight(value: bigint, at: number = now()): void {
    if (height === undefined || now() - height.at > heightMaxAgeMs) {
      height = { value, at };
      return;
    }
    // Heights only grow: two lower bounds make one as high as either and as recent as either. A lower
    // reading (a lagging node behind a failover) does not take one back.
    height = { value: height.value > value ? height.value : value, at: Math.max(height.at, at) };
  }

  function remember(lifetime: BlockhashLifetime): void {
    known.delete(lifetime.blockhash);
    known.set(lifetime.blockhash, lifetime.lastValidBlockHeight);
  }

  /** One `getLatestBlockhash` call, remembered with what it says of the height. */
  async function readLatest(at: BlockhashCommitment): Promise<BlockhashLifetime> {
    const asked = now();
    const { value } = await rpc.getLatestBlockhash({ commitment: at }).send();
    const lifetime = { blockhash: String(value.blockhash), lastValidBlockHeight: BigInt(value.lastValidBlockHeight) };
    remember(lifetime);
    // A node gives its newest blockhash exactly MAX_PROCESSING_AGE blocks of life: this was the height
    // when it was asked (the answer may have waited in the socket while the event loop was busy).
    if (at !== "finalized") noteHeight(lifetime.lastValidBlockHeight - MAX_PROCESSING_AGE, asked);
    latestByCommitment.set(at, { value: lifetime, at: asked });
    return lifetime;
  }

  /** {@link readLatest}, sharing a call already in flight. */
  function fetchLatest(at: BlockhashCommitment): Promise<BlockhashLifetime> {
    const pending = latestInFlight.get(at);
    if (pending) return pending;
    const promise = readLatest(at).finally(() => latestInFlight.delete(at));
    latestInFlight.set(at, promise);
    return promise;
  }

  async function isValid(blockhash: string, at: BlockhashCommitment): Promise<boolean> {
    const { value } = await rpc.isBlockhashValid(blockhash as Blockhash, { commitment: at }).send();
    return value;
  }

  async function checkRemote(blockhash: string): Promise<BlockhashValidity> {
    // Never seen here: read the newest blockhash alongside, fetched after the client's own, so its limit
    // bounds this one's from above (and is exact when the client used the newest, the common case).
    const latest = known.has(blockhash) ? undefined : fetchLatest(commitment);
    latest?.catch(() => {});
    let foundAt: "processed" | "confirmed" = commitment;
    if (!(await isValid(blockhash, commitment))) {
      // A blockhash taken at `processed` is not yet known to the confirmed bank: still perfectly valid.
      if (commitment === "processed" || !(await isValid(blockhash, "processed"))) throw blockhashExpired(blockhash);
      foundAt = "processed";
    }
    const exact = known.get(blockhash);
    if (exact !== undefined) return { lastValidBlockHeight: exact, exact: true, commitment: foundAt };
    const bound = foundAt === commitment && latest ? await latest : await fetchLatest(foundAt);
    if (bound.blockhash === blockhash)
      return { lastValidBlockHeight: bound.lastValidBlockHeight, exact: true, commitment: foundAt };
    // Not the newest at that commitment. The read alongside may predate the blockhash (the confirmed bank can
    // take in the client's processed blockhash between that read and the check), so the bound is the newest
    // bank's newest blockhash, read after the check (a call of its own, not one already in flight): no valid
    // blockhash outlives it.
    const newest = await readLatest("processed");
    return {
      lastValidBlockHeight: newest.lastValidBlockHeight,
      exact: newest.blockhash === blockhash,
      commitment: foundAt,
    };
  }

  function cached(blockhash: string): BlockhashValidity | undefined {
    const lastValid = known.get(blockhash);
    if (lastValid === undefined || height === undefined || now() - height.at > heightMaxAgeMs) return undefined;
    if (height.value > lastValid) {
      throw blockhashExpired(blockhash, { lastValidBlockHeight: lastValid, blockHeight: height.value });
    }
    return height.value + heightMargin <= lastValid
      ? { lastValidBlockHeight: lastValid, exact: true, commitment }
      : undefined;
  }

  return {
    async latest(opts = {}) {
      const at = opts.commitment ?? commitment;
      const cached = latestByCommitment.get(at);
      if (cached && now() - cached.at <= (opts.maxAgeMs ?? 0)) return cached.value;
      return fetchLatest(at);
    },
    cached,
    async check(blockhash) {
      const known = cached(blockhash);
      if (known !== undefined) return known;
      const pending = checksInFlight.get(blockhash);
      if (pending) return pending;
      const promise = checkRemote(blockhash).finally(() => checksInFlight.delete(blockhash));
      checksInFlight.set(blockhash, promise);
      return promise;
    },
    isValid,
    noteBlockHeight: (value, askedMsAgo = 0) => noteHeight(value, now() - askedMsAgo),
    async blockHeight() {
      if (height !== undefined && now() - height.at <= heightMaxAgeMs) return height.value;
      const lifetime = await fetchLatest(commitment);
      return lifetime.lastValidBlockHeight - MAX_PROCESSING_AGE;
    },
  };
}
