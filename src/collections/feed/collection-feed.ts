/**
 * The collection change feed of one chain: follows confirmed blocks with the fee market's block follower
 * (src/fees/block-follower.ts: the same gap, skip and retry rules, reading from the last slot read after a
 * break), reads each block's membership changes (membership-instructions.ts), and appends one event per
 * change of a watched collection to that collection's log (event-log.ts), which streams read from.
 *
 * A collection is followed from its first watch on: its verified members and size are read then (DAS,
 * with the same membership check as ListCollectionNfts: member-scan.ts), and kept in step by the events.
 * Membership decides what burns and transfers count (only a verified member's do); verify and unverify
 * instructions name their collection and count as they are. Blocks are read only while some collection is
 * followed: a gateway nobody watches makes no extra upstream call.
 *
 * A block is applied whole before the next: a block whose changes cannot be resolved yet (a Metadata
 * account read failed) is retried, not skipped, so no event is lost while the upstream recovers.
 */
import { getBase58Decoder, getBase58Encoder, getProgramDerivedAddress, isAddress } from "@solana/kit";
import type { Address, GetAccountInfoApi, GetBlockApi, GetSlotApi, Rpc } from "@solana/kit";
import { createBlockFollower } from "../../fees/block-follower.ts";
import type { FollowerState } from "../../fees/block-follower.ts";
import { SolgateError } from "../../errors.ts";
import type { DasClient } from "../../upstream/upstream.ts";
import { isVerifiedMember } from "../asset-mapping.ts";
import type { Collections } from "../collections.ts";
import type { FloorPrice, FloorPriceLookup } from "../market/market-source.ts";
import { createCollectionsDas } from "../das-client.ts";
import { createLruCache } from "../lru-cache.ts";
import { scanMembers } from "../member-scan.ts";
import { metadataAddress } from "../token-metadata.ts";
import type { EventLog, FeedEvent, FeedEventBody } from "./event-log.ts";
import { feedBlockOf } from "./feed-block.ts";
import type { FeedBlock } from "./feed-block.ts";
import { membershipChangesOf } from "./membership-instructions.ts";
import type { MembershipChange } from "./membership-instructions.ts";
import { BUBBLEGUM_PROGRAM } from "./program-keys.ts";
import { sleep } from "../../sleep.ts";

/** The event kinds, as the log names them. */
export type FeedEventKind = FeedEventBody["kind"];

/** One message of a watch: an event, or a heartbeat while nothing happens. */
export type WatchMessage = { event: FeedEvent } | { heartbeat: { slot: bigint; cursor: string } };

/** What the feed needs of the upstream. */
export interface FeedUpstream {
  rpc: Rpc<GetSlotApi & GetBlockApi & GetAccountInfoApi>;
  das: DasClient;
}

/** Options of {@link createCollectionFeed}. */
export interface CollectionFeedOptions {
  upstream: FeedUpstream;
  /** The collections core: a watch of an address that is no collection is refused as it refuses it. */
  collections: Pick<Collections, "get">;
  log: EventLog;
  /** Time between block reads (default 400 ms). */
  pollMs?: number;
  /** Time between heartbeats of an idle watch (default 15 s). */
  heartbeatMs?: number;
  /** The most slots read in one catch-up (default 9,000, about an hour); older ones are dropped and counted. */
  maxCatchUpSlots?: number;
  /** Floor prices: with one, FLOOR_CHANGED events (read every `floorPollMs`, default 60 s). */
  market?: FloorPriceLookup;
  floorPollMs?: number;
  /** Collections followed at most (default 1,000): each holds its members in memory, and is followed for good. */
  maxCollections?: number;
  /** Verified members read when a collection is first watched (default 100,000). */
  maxSeedMembers?: number;
  onError?: (error: unknown, during: string) => void;
}

/** What the feed reports about itself. */
export interface CollectionFeedStatus {
  readonly follower: FollowerState;
  readonly collections: number;
  /** Blocks read and applied. */
  readonly blocks: number;
  /** Events appended, all collections. */
  readonly events: number;
}

/** A chain's collection feed. */
export interface CollectionFeed {
  /**
   * The collection's events after `cursor` (none before now when empty), then new ones as they come, with
   * heartbeats between, until `signal` aborts.
   * @throws SolgateError INVALID_ADDRESS, NOT_FOUND (no such collection), COLLECTION_CURSOR_INVALID,
   *   COLLECTION_CURSOR_EXPIRED, COLLECTION_FEED_FULL, and the upstream's errors while the collection is first read.
   */
  watch(
    collection: string,
    cursor: string,
    kinds: readonly FeedEventKind[],
    signal: AbortSignal,
  ): Promise<AsyncIterable<WatchMessage>>;
  /** Applies a block now (tests of blocks the feed is not following). */
  applyBlock(block: FeedBlock): Promise<void>;
  status(): CollectionFeedStatus;
  stop(): Promise<void>;
}

interface Followed {
  size: bigint;
  /** The last floor read; undefined before the first. */
  floor?: FloorPrice;
  /** Verified members: asset id -> owner ("" when not known). */
  members: Map<string, string>;
}

const base58 = getBase58Decoder();
const base58Bytes = getBase58Encoder();
const ASSET_SEED = new TextEncoder().encode("asset");
/** Metadata layout: key (1), update authority (32), then the mint. */
const METADATA_MINT_AT = 33;

/**
 * Creates the feed; it reads blocks once the first collection is watched.
 *
 * Long (~320 lines): the block loop, the seeding of a newly watched collection and the watches share the
 * followed collections and the blocks fetched; the log, cursors and decoding are beside it.
 */
export function createCollectionFeed(options: CollectionFeedOptions): CollectionFeed {
  const { upstream, log } = options;
  const pollMs = options.pollMs ?? 400;
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  const maxSeedMembers = options.maxSeedMembers ?? 100_000;
  const onError = options.onError ?? (() => {});
  const das = createCollectionsDas(upstream.das);
  const followed = new Map<string, Followed>();
  const seeding = new Map<string, Promise<Followed>>();
  /** Metadata account -> mint: a Metadata account's mint never changes. */
  const mintOfMetadata = createLruCache<string>({ maxEntries: 200_000 });
  let blocks = 0;
  let events = 0;

  // The follower reads blocks exactly as the fee market does; the blocks it reads are kept here, by slot,
  // until it says they are next in order.
  const fetched = new Map<bigint, unknown>();
  const ready: FeedBlock[] = [];
  const rpc = upstream.rpc;
  const recordingRpc = {
    getSlot: (...args: Parameters<typeof rpc.getSlot>) => rpc.getSlot(...args),
    getBlock: (slot: bigint, config: Parameters<typeof rpc.getBlock>[1]) => {
      const pending = rpc.getBlock(slot, config as never);
      return {
        send: async (sendOptions?: { abortSignal?: AbortSignal }) => {
          const block = await pending.send(sendOptions);
          if (block !== null) fetched.set(slot, block);
          return block;
        },
      };
    },
  } as unknown as Rpc<GetSlotApi & GetBlockApi>;
  const follower = createBlockFollower({
    rpc: recordingRpc,
    window: {
      windowSlots: 1,
      addBlock(slot) {
        const block = fetched.get(slot);
        fetched.delete(slot);
        if (block !== undefined) ready.push(feedBlockOf(slot, block as { transactions?: unknown }));
        return true;
      },
      advanceTo(slot) {
        for (const s of fetched.keys()) if (s <= slot) fetched.delete(s);
      },
    },
    maxCatchUpSlots: options.maxCatchUpSlots ?? 9_000,
    backfillSlots: 1,
  });

  let running: Promise<void> | undefined;
  let floorsRunning: Promise<void> | undefined;
  async function floorLoop(market: FloorPriceLookup): Promise<void> {
    while (!stopping.signal.aborted) {
      for (const [collection, state] of followed) {
        const floor = await market.floorPrice(collection);
        if (floor === null || floor.lamports === state.floor?.lamports) continue;
        const previous = state.floor;
        state.floor = floor;
        // The first floor read is where the feed starts, not a change.
        if (previous === undefined) continue;
        append({
          collection,
          kind: "FLOOR_CHANGED",
          slot: 0n,
          signature: "",
          instructionIndex: 0,
          verifiedSize: state.size,
          asset: "",
          compressed: false,
          owner: "",
          previousOwner: "",
          time: Date.now(),
          instruction: "",
          floor,
          previousFloor: previous,
        });
      }
      await sleep(options.floorPollMs ?? 60_000, stopping.signal);
    }
  }
  const stopping = new AbortController();
  async function loop(): Promise<void> {
    while (!stopping.signal.aborted) {
      await follower.tick(stopping.signal);
      const failure = follower.state().lastError;
      if (follower.state().consecutiveFailures > 0) onError(failure, "block read");
      // Applied strictly in order; a block that cannot be resolved yet is tried again after a pause.
      while (ready.length > 0 && !stopping.signal.aborted) {
        try {
          await applyBlock(ready[0]!);
          ready.shift();
        } catch (error) {
          onError(error, "block apply");
          break;
        }
      }
      await sleep(pollMs, stopping.signal);
    }
  }

  async function mintOf(change: MembershipChange): Promise<string> {
    if (change.asset !== undefined) return change.asset;
    if (change.leaf !== undefined) {
      const nonce = Buffer.alloc(8);
      nonce.writeBigUInt64LE(change.leaf.nonce);
      const [pda] = await getProgramDerivedAddress({
        programAddress: BUBBLEGUM_PROGRAM as Address,
        seeds: [ASSET_SEED, base58Bytes.encode(change.leaf.tree), nonce],
      });
      return pda;
    }
    const metadata = change.metadata!;
    const known = mintOfMetadata.get(metadata);
    if (known !== undefined) return known;
    const { value } = await rpc
      .getAccountInfo(metadata as Address, { encoding: "base64", commitment: "confirmed" })
      .send();
    // A Metadata account closed since (burned): its mint cannot be read any more; the event keeps no asset id.
    if (value === null) return "";
    const data = Buffer.from(value.data[0], "base64");
    if (data.length < METADATA_MINT_AT + 32) return "";
    const mint = base58.decode(data.subarray(METADATA_MINT_AT, METADATA_MINT_AT + 32));
    mintOfMetadata.set(metadata, mint, Number.MAX_SAFE_INTEGER);
    return mint;
  }

  function collectionOf(asset: string): [string, Followed] | undefined {
    for (const entry of followed) if (entry[1].members.has(asset)) return entry;
    return undefined;
  }

  async function applyBlock(block: FeedBlock): Promise<void> {
    // Resolve first, append after: a failure leaves the block unapplied, to be tried whole again.
    const resolved: { change: MembershipChange; asset: string; signature: string }[] = [];
    for (const tx of block.transactions)
      for (const change of membershipChangesOf(tx)) {
        if (change.collection !== undefined && !followed.has(change.collection)) continue;
        resolved.push({ change, asset: await mintOf(change), signature: tx.signature });
      }
    const time = block.blockTime === undefined ? undefined : block.blockTime * 1000;
    for (const { change, asset, signature } of resolved) {
      const base = {
        slot: block.slot,
        signature,
        instructionIndex: change.instructionIndex,
        ...(change.innerIndex === undefined ? {} : { innerIndex: change.innerIndex }),
        asset,
        compressed: change.compressed,
        time,
        instruction: change.instruction,
      };
      if (change.kind === "added" || change.kind === "removed") {
        const state = followed.get(change.collection!)!;
        if (change.kind === "added") {
          if (state.members.has(asset)) continue; // already counted when the collection was first read
          state.members.set(asset, change.owner ?? "");
          state.size++;
        } else {
          // The unverify succeeded, so the item was a verified member, whether or not the first read saw it.
          state.members.delete(asset);
          if (state.size > 0n) state.size--;
        }
        append({
          ...base,
          collection: change.collection!,
          kind: change.kind === "added" ? "MEMBER_ADDED" : "MEMBER_REMOVED",
          verifiedSize: state.size,
          owner: change.kind === "added" ? (change.owner ?? "") : "",
          previousOwner: "",
        });
        continue;
      }
      const member = collectionOf(asset);
      if (member === undefined) continue; // not a verified member of a followed collection: nothing to say
      const [collection, state] = member;
      const previousOwner = change.previousOwner ?? state.members.get(asset) ?? "";
      if (change.kind === "burned") {
        state.members.delete(asset);
        if (state.size > 0n) state.size--;
        append({ ...base, collection, kind: "MEMBER_REMOVED", verifiedSize: state.size, owner: "", previousOwner });
      } else {
        state.members.set(asset, change.owner ?? "");
        append({
          ...base,
          collection,
          kind: "MEMBER_TRANSFERRED",
          verifiedSize: state.size,
          owner: change.owner ?? "",
          previousOwner,
        });
      }
    }
    blocks++;
  }

  function append(body: FeedEventBody): void {
    log.append(body);
    events++;
  }

  async function seed(collection: string, signal: AbortSignal): Promise<Followed> {
    const info = await options.collections.get(collection, signal);
    const members = new Map<string, string>();
    await scanMembers(das, {
      collection,
      want: maxSeedMembers,
      maxCalls: Math.ceil(maxSeedMembers / 1000) + 4,
      signal,
      onMember: (asset) => {
        if (!isVerifiedMember(asset, collection)) return;
        const owner = typeof asset.ownership?.owner === "string" ? asset.ownership.owner : "";
        members.set(asset.id, owner);
      },
    });
    // Classic members' Metadata accounts, so their unverify and burn resolve without a read.
    for (const [id] of members)
      if (isAddress(id)) mintOfMetadata.set(await metadataAddress(id), id, Number.MAX_SAFE_INTEGER);
    return { size: info.itemCount, members };
  }

  async function follow(collection: string, signal: AbortSignal): Promise<void> {
    if (followed.has(collection)) return;
    let pending = seeding.get(collection);
    if (pending === undefined && followed.size + seeding.size >= (options.maxCollections ?? 1000))
      throw new SolgateError(
        "COLLECTION_FEED_FULL",
        "this server follows as many collections as it may; watch one it already follows, or ask its operator",
        { maxCollections: options.maxCollections ?? 1000 },
      );
    if (pending === undefined) {
      // Blocks are read from before the members are, so no change falls between the two.
      running ??= loop();
      pending = seed(collection, signal).finally(() => seeding.delete(collection));
      seeding.set(collection, pending);
    }
    const state = await pending;
    if (!followed.has(collection)) followed.set(collection, state);
    if (options.market !== undefined) floorsRunning ??= floorLoop(options.market);
  }

  return {
    async watch(collection, cursor, kinds, signal) {
      if (!isAddress(collection))
        throw new SolgateError("INVALID_ADDRESS", `address must be a base58 address of 32 bytes, got ${collection}`, {
          field: "address",
        });
      // The cursor is checked before anything is read: a bad one costs no upstream call.
      log.after(collection, cursor);
      await follow(collection, signal);
      return watchFrom(collection, cursor, new Set(kinds), signal);
    },
    applyBlock,
    status: () => ({ follower: follower.state(), collections: followed.size, blocks, events }),
    async stop() {
      stopping.abort();
      await running;
      await floorsRunning;
    },
  };

  /** Subscribes at once (what is appended from now on is kept for the stream), then streams. */
  function watchFrom(
    collection: string,
    cursor: string,
    kinds: ReadonlySet<FeedEventKind>,
    signal: AbortSignal,
  ): AsyncIterable<WatchMessage> {
    const queue: FeedEvent[] = [];
    let wake: (() => void) | undefined;
    const unsubscribe = log.subscribe(collection, (event) => {
      queue.push(event);
      wake?.();
    });
    const onAbort = () => {
      unsubscribe();
      wake?.();
    };
    signal.addEventListener("abort", onAbort, { once: true });
    // The backlog is read after subscribing, so nothing appended in between is missed (duplicates are skipped).
    const backlog = log.after(collection, cursor);
    async function* stream(): AsyncGenerator<WatchMessage> {
      try {
        let last = 0n;
        const wanted = (event: FeedEvent) => kinds.size === 0 || kinds.has(event.kind);
        for (const event of backlog) {
          last = event.sequence;
          if (wanted(event)) yield { event };
        }
        while (!signal.aborted) {
          while (queue.length > 0) {
            const event = queue.shift()!;
            if (event.sequence <= last) continue;
            last = event.sequence;
            if (wanted(event)) yield { event };
          }
          const timedOut = await new Promise<boolean>((resolve) => {
            const timer = setTimeout(() => resolve(true), heartbeatMs);
            wake = () => {
              clearTimeout(timer);
              resolve(false);
            };
          });
          wake = undefined;
          if (timedOut && !signal.aborted)
            yield {
              heartbeat: {
                slot: follower.state().lastBlockSlot ?? 0n,
                cursor: log.newest(collection)?.cursor ?? "",
              },
            };
        }
      } finally {
        unsubscribe();
        signal.removeEventListener("abort", onAbort);
      }
    }
    return stream();
  }
}
