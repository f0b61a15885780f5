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
 *
 * With Geyser, blocks come from the gateway's processed block stream (the fee market's, geyser-blocks.ts) and
 * are applied when the status stream says their slot is confirmed (events go out at confirmed); a confirmed
 * slot the stream did not bring, or a block whose parent was not read, makes the follower read what is
 * missing with getBlock at once.
 *
 * In a fleet (redis-feed-store.ts), only the holder of the fee lease (the replica that follows blocks for the
 * fee market, and to which Geyser's block stream goes) reads blocks and appends; every replica serves its
 * watches from the shared log. A replica that takes the lease over loads the followed collections' state as
 * the log left it and reads on from the last slot whose events were all appended, so no event is lost across
 * a lease move; a block read twice appends nothing twice.
 */
import { getBase58Decoder, getBase58Encoder, getProgramDerivedAddress, isAddress } from "@solana/kit";
import type { Address, GetAccountInfoApi, GetBlockApi, GetSlotApi, Rpc } from "@solana/kit";
import { createBlockFollower } from "../../fees/block-follower.ts";
import type { BlockFollower, FollowerState } from "../../fees/block-follower.ts";
import type { SubscribeUpdateBlock } from "../../../gen/geyser/geyser_pb.js";
import type { Lease } from "../../store/lease.ts";
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
import { feedBlockOf, feedBlockOfStream } from "./feed-block.ts";
import { decodeFeedCursor } from "./feed-cursor.ts";
import type { FeedStore } from "./redis-feed-store.ts";
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

/** Processed blocks with their transactions (the Geyser block stream the fee market reads). */
export interface FeedBlockStream {
  healthy(): boolean;
  onBlock(listener: (block: SubscribeUpdateBlock) => void): () => void;
}

/** Slots as they are confirmed (the Geyser status stream's block metas). */
export interface ConfirmedSlots {
  onBlock(listener: (slot: bigint) => void): () => void;
}

/** The feed in a fleet: the shared store, and the lease whose holder alone reads blocks and appends. */
export interface FeedFleet {
  store: FeedStore;
  lease: Lease;
}

/** Options of {@link createCollectionFeed}. */
export interface CollectionFeedOptions {
  upstream: FeedUpstream;
  /** The collections core: a watch of an address that is no collection is refused as it refuses it. */
  collections: Pick<Collections, "get">;
  /** This process's log; in a fleet the store is the log. */
  log?: EventLog;
  fleet?: FeedFleet;
  /**
   * Geyser: blocks from the processed block stream, applied as the confirmed slots come (both are needed);
   * while the stream is healthy the follower only checks every `streamCheckMs` (default 5 s).
   */
  stream?: { blocks: FeedBlockStream; confirmed: ConfirmedSlots };
  streamCheckMs?: number;
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

/** The most processed blocks kept while their slots wait for confirmation. */
const MAX_PROCESSED = 256;

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
 * Long (~450 lines): the block loop (polled or streamed, leading or not), the seeding of a newly watched
 * collection and the watches share the followed collections, the follower and the blocks fetched; the log,
 * cursors, decoding and the fleet's store are beside it.
 */
export function createCollectionFeed(options: CollectionFeedOptions): CollectionFeed {
  const { upstream, fleet } = options;
  const log: EventLog = fleet?.store ?? options.log!;
  if (log === undefined) throw new TypeError("createCollectionFeed needs a log or a fleet");
  const pollMs = options.pollMs ?? 400;
  const streamCheckMs = options.streamCheckMs ?? 5000;
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  const maxSeedMembers = options.maxSeedMembers ?? 100_000;
  const maxCollections = options.maxCollections ?? 1000;
  const onError = options.onError ?? (() => {});
  const das = createCollectionsDas(upstream.das);
  const followed = new Map<string, Followed>();
  const seeding = new Map<string, Promise<Followed>>();
  /** Metadata account -> mint: a Metadata account's mint never changes. */
  const mintOfMetadata = createLruCache<string>({ maxEntries: 200_000 });
  let blocks = 0;
  let events = 0;
  // Alone, this process always leads; in a fleet, whether it held the lease at its last turn.
  let leading = fleet === undefined;
  // In a fleet: the state in memory may be behind the store (an append failed): load it again before leading on.
  let reload = false;
  // The leader's last slot as read from the store, for a follower's heartbeats.
  let mirroredSlot: bigint | undefined;

  // The follower reads blocks exactly as the fee market does; the blocks it reads (or the stream brings) are
  // kept here, by slot, until it says they are next in order.
  const fetched = new Map<bigint, FeedBlock>();
  const ready: FeedBlock[] = [];
  // Processed stream blocks waiting for their slot to be confirmed.
  const processed = new Map<bigint, { parentSlot: bigint; block: FeedBlock }>();
  const rpc = upstream.rpc;
  const recordingRpc = {
    getSlot: (...args: Parameters<typeof rpc.getSlot>) => rpc.getSlot(...args),
    getBlock: (slot: bigint, config: Parameters<typeof rpc.getBlock>[1]) => {
      const pending = rpc.getBlock(slot, config as never);
      return {
        send: async (sendOptions?: { abortSignal?: AbortSignal }) => {
          const block = await pending.send(sendOptions);
          if (block !== null) fetched.set(slot, feedBlockOf(slot, block as { transactions?: unknown }));
          return block;
        },
      };
    },
  } as unknown as Rpc<GetSlotApi & GetBlockApi>;
  const newFollower = (startSlot?: bigint): BlockFollower =>
    createBlockFollower({
      rpc: recordingRpc,
      window: {
        windowSlots: 1,
        addBlock(slot) {
          const block = fetched.get(slot);
          fetched.delete(slot);
          if (block !== undefined) ready.push(block);
          return true;
        },
        advanceTo(slot) {
          for (const s of fetched.keys()) if (s <= slot) fetched.delete(s);
        },
      },
      maxCatchUpSlots: options.maxCatchUpSlots ?? 9_000,
      backfillSlots: 1,
      ...(startSlot === undefined ? {} : { startSlot }),
    });
  let follower = newFollower();

  // The follower, the blocks fetched and the followed state are touched by one task at a time: the loop's
  // tick, a streamed block, a takeover.
  let exclusiveTail: Promise<unknown> = Promise.resolve();
  function exclusive<T>(task: () => Promise<T>): Promise<T> {
    const result = exclusiveTail.then(task);
    exclusiveTail = result.catch(() => {});
    return result;
  }

  let running: Promise<void> | undefined;
  let floorsRunning: Promise<void> | undefined;
  const stopping = new AbortController();
  let nap = new AbortController();
  // The stream showed slots the follower has not read: it reads them at its next turn, whatever the stream.
  let readNow = false;
  const wakeLoop = () => {
    readNow = true;
    nap.abort();
  };
  const offStream: (() => void)[] = [];
  // When the status stream last confirmed a slot: without it (its lease is another replica's, or it is down),
  // stream blocks are released by the node's confirmed slot (confirmByTip).
  let lastConfirmedAt = Number.NEGATIVE_INFINITY;

  async function floorLoop(market: FloorPriceLookup): Promise<void> {
    while (!stopping.signal.aborted) {
      for (const [collection, state] of leading ? followed : []) {
        const floor = await market.floorPrice(collection);
        if (floor === null || floor.lamports === state.floor?.lamports) continue;
        const previous = state.floor;
        state.floor = floor;
        // The first floor read is where the feed starts, not a change.
        if (previous === undefined) continue;
        await append({
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
        }).catch((error: unknown) => {
          state.floor = previous;
          onError(error, "floor");
        });
      }
      await sleep(options.floorPollMs ?? 60_000, stopping.signal);
    }
  }

  /** Applies the blocks the follower put in order; in a fleet, records each one's slot once all its events are in. */
  async function applyReady(): Promise<void> {
    while (ready.length > 0 && !stopping.signal.aborted) {
      const block = ready[0]!;
      await applyBlock(block);
      if (fleet !== undefined) await fleet.store.setLastSlot(block.slot);
      ready.shift();
    }
  }

  /** Loads what the log says (state, position) before leading: the last leader may have stopped anywhere. */
  async function takeOver(store: FeedStore): Promise<void> {
    followed.clear();
    ready.length = 0;
    fetched.clear();
    processed.clear();
    const last = await store.lastSlot();
    follower = newFollower(last === undefined ? undefined : last + 1n);
    for (const collection of await store.wanted()) {
      const state = await store.state(collection);
      if (state !== undefined) followed.set(collection, { ...state });
    }
  }

  /** Starts the first read of each collection some replica asked for that nobody read yet. */
  async function followWanted(store: FeedStore): Promise<void> {
    for (const collection of await store.wanted()) {
      if (followed.has(collection) || seeding.has(collection)) continue;
      const pending = (async () => {
        const existing = await store.state(collection);
        if (existing === undefined) {
          const first = await seed(collection, stopping.signal);
          await store.seed(collection, first.size, first.members);
        }
        return (await store.state(collection))!;
      })();
      seeding.set(collection, pending);
      pending.then(
        (state) => {
          seeding.delete(collection);
          if (leading) void exclusive(async () => void (followed.has(collection) || followed.set(collection, state)));
        },
        (error: unknown) => {
          seeding.delete(collection);
          onError(error, "collection read");
        },
      );
    }
  }

  /** This replica's turn: whether it leads (reads blocks and appends) now. */
  async function turn(): Promise<boolean> {
    if (fleet === undefined) return true;
    const holds = await fleet.lease.hold().catch(() => false);
    if (!holds) {
      leading = false;
      mirroredSlot = (await fleet.store.lastSlot().catch(() => undefined)) ?? mirroredSlot;
      return false;
    }
    if (!leading || reload) {
      await exclusive(() => takeOver(fleet.store));
      leading = true;
      reload = false;
    }
    await followWanted(fleet.store);
    return true;
  }

  async function loop(): Promise<void> {
    if (options.stream !== undefined) {
      offStream.push(options.stream.blocks.onBlock(onStreamBlock), options.stream.confirmed.onBlock(onConfirmed));
    }
    let lastTick = Number.NEGATIVE_INFINITY;
    while (!stopping.signal.aborted) {
      nap = new AbortController();
      try {
        // On a healthy stream the follower only checks now and then, or when the stream showed a gap (a wake).
        const streaming = options.stream?.blocks.healthy() === true;
        const leads = await turn();
        if (leads && streaming && followed.size > 0 && Date.now() - lastConfirmedAt >= 2000)
          await confirmByTip().catch((error: unknown) => {
            onError(error, "confirmed slot");
            readNow = true;
          });
        if (leads && followed.size === 0) {
          // Nothing followed yet: no block is read, and the first collection read starts from the tip.
          follower = newFollower();
        } else if (leads && (!streaming || readNow || Date.now() - lastTick >= streamCheckMs || ready.length > 0)) {
          lastTick = Date.now();
          readNow = false;
          await exclusive(async () => {
            await follower.tick(stopping.signal);
            if (follower.state().consecutiveFailures > 0) onError(follower.state().lastError, "block read");
            await applyReady();
          });
        }
      } catch (error) {
        // Applied strictly in order: a block that cannot be applied yet is tried again after a pause. In a fleet,
        // its first events may be in the log already: the state is loaded again from the store first.
        onError(error, "block apply");
        if (fleet !== undefined) reload = true;
      }
      await sleep(pollMs, AbortSignal.any([stopping.signal, nap.signal]));
    }
  }

  function onStreamBlock(block: SubscribeUpdateBlock): void {
    if (!leading) return;
    let read: FeedBlock;
    try {
      read = feedBlockOfStream(block);
    } catch (error) {
      onError(error, "stream block");
      return;
    }
    processed.set(block.slot, { parentSlot: block.parentSlot, block: read });
    if (processed.size > MAX_PROCESSED) processed.delete(processed.keys().next().value!);
  }

  function onConfirmed(slot: bigint): void {
    lastConfirmedAt = Date.now();
    release(slot);
  }

  /**
   * Without the status stream (down, or in a fleet its lease is another replica's): the node's confirmed slot,
   * and the processed blocks its parent links show it rests on, released in order (those beside them are on
   * forks that died, and dropped). One getSlot a turn instead of a getBlock a slot.
   */
  async function confirmByTip(): Promise<void> {
    const tip = await rpc.getSlot({ commitment: "confirmed" }).send();
    const chain: bigint[] = [];
    for (let s: bigint | undefined = tip; s !== undefined && processed.has(s); s = processed.get(s)?.parentSlot)
      chain.push(s);
    if (chain.length === 0) {
      // The stream has not brought the confirmed block: the follower reads what is missing.
      for (const s of processed.keys()) if (s <= tip) return wakeLoop();
      return;
    }
    for (const s of chain.reverse()) release(s);
  }

  /** Applies the processed block of a confirmed slot (the follower reads it when the stream did not bring it). */
  function release(slot: bigint): void {
    if (!leading) return;
    const entry = processed.get(slot);
    for (const s of processed.keys()) if (s <= slot) processed.delete(s);
    // A confirmed slot the stream did not bring: the follower reads it now.
    if (entry === undefined) {
      wakeLoop();
      return;
    }
    void exclusive(async () => {
      if (!leading || reload) return;
      fetched.set(slot, entry.block);
      const outcome = follower.accept({
        slot,
        parentSlot: entry.parentSlot,
        prices: { transactions: [], votes: 0, unreadable: 0 },
      });
      if (outcome !== "added") {
        fetched.delete(slot);
        // Its parent was not read: the follower reads the slots between (this one included) now.
        if (outcome === "gap") wakeLoop();
        return;
      }
      await applyReady();
    }).catch((error: unknown) => {
      onError(error, "block apply");
      if (fleet !== undefined) reload = true;
      wakeLoop();
    });
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
        await append({
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
        await append({
          ...base,
          collection,
          kind: "MEMBER_REMOVED",
          verifiedSize: state.size,
          owner: "",
          previousOwner,
        });
      } else {
        state.members.set(asset, change.owner ?? "");
        await append({
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

  async function append(body: FeedEventBody): Promise<void> {
    if ((await log.append(body)) !== undefined) events++;
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

  const full = () =>
    new SolgateError(
      "COLLECTION_FEED_FULL",
      "this server follows as many collections as it may; watch one it already follows, or ask its operator",
      { maxCollections },
    );

  async function follow(collection: string, signal: AbortSignal): Promise<void> {
    if (fleet !== undefined) {
      // Any replica's watch adds the collection; the lease holder reads it and follows it for the fleet.
      await options.collections.get(collection, signal);
      if (!(await fleet.store.want(collection, maxCollections))) throw full();
      running ??= loop();
      wakeLoop();
    } else {
      if (followed.has(collection)) return;
      let pending = seeding.get(collection);
      if (pending === undefined && followed.size + seeding.size >= maxCollections) throw full();
      if (pending === undefined) {
        // Blocks are read from before the members are, so no change falls between the two.
        running ??= loop();
        pending = seed(collection, signal).finally(() => seeding.delete(collection));
        seeding.set(collection, pending);
      }
      const state = await pending;
      if (!followed.has(collection)) followed.set(collection, state);
    }
    if (options.market !== undefined) floorsRunning ??= floorLoop(options.market);
  }

  // In a fleet every replica takes its turns from the start: whichever holds the fee lease follows what any
  // replica's watches asked for (with nothing asked, it only reads the followed set).
  if (fleet !== undefined) running = loop();

  return {
    async watch(collection, cursor, kinds, signal) {
      if (!isAddress(collection))
        throw new SolgateError("INVALID_ADDRESS", `address must be a base58 address of 32 bytes, got ${collection}`, {
          field: "address",
        });
      // The cursor is checked before anything is read upstream: a bad one costs no upstream call.
      await log.after(collection, cursor);
      await follow(collection, signal);
      return watchFrom(collection, cursor, new Set(kinds), signal);
    },
    applyBlock: (block) => exclusive(() => applyBlock(block)),
    status: () => ({ follower: follower.state(), collections: followed.size, blocks, events }),
    async stop() {
      stopping.abort();
      for (const off of offStream) off();
      await running;
      await floorsRunning;
    },
  };

  /**
   * Subscribes at once (what is appended from now on is kept for the stream), reads what the cursor asks for,
   * then streams. Sequences have no gaps: one seen in the live events (a reader that started late, a store
   * that was away) is filled from the log before going on.
   */
  async function watchFrom(
    collection: string,
    cursor: string,
    kinds: ReadonlySet<FeedEventKind>,
    signal: AbortSignal,
  ): Promise<AsyncIterable<WatchMessage>> {
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
    let backlog: FeedEvent[];
    let last: bigint;
    try {
      // The backlog is read after subscribing, so nothing appended in between is missed (duplicates are skipped).
      if (cursor === "") {
        backlog = [];
        last = await log.head(collection);
      } else {
        backlog = await log.after(collection, cursor);
        last = decodeFeedCursor(collection, cursor).sequence;
      }
    } catch (error) {
      onAbort();
      signal.removeEventListener("abort", onAbort);
      throw error;
    }
    const heartbeatAt = () => ({
      slot: (leading ? follower.state().lastBlockSlot : mirroredSlot) ?? 0n,
      cursor: last === 0n ? "" : log.cursorOf(collection, last),
    });
    async function* stream(): AsyncGenerator<WatchMessage> {
      try {
        const wanted = (event: FeedEvent) => kinds.size === 0 || kinds.has(event.kind);
        for (const event of backlog) {
          last = event.sequence;
          if (wanted(event)) yield { event };
        }
        // Caught up: say so at once, so the stream's headers and a first message reach the client now, not at the
        // first change or heartbeat (up to 15 s on a quiet collection, longer than many clients and proxies wait).
        yield { heartbeat: heartbeatAt() };
        while (!signal.aborted) {
          while (queue.length > 0) {
            const event = queue.shift()!;
            if (event.sequence <= last) continue;
            if (event.sequence > last + 1n) {
              queue.unshift(event);
              for (const missed of await log.after(collection, log.cursorOf(collection, last))) {
                if (missed.sequence <= last) continue;
                last = missed.sequence;
                if (wanted(missed)) yield { event: missed };
              }
              continue;
            }
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
          if (timedOut && !signal.aborted) yield { heartbeat: heartbeatAt() };
        }
      } finally {
        unsubscribe();
        signal.removeEventListener("abort", onAbort);
      }
    }
    return stream();
  }
}
