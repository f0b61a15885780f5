/**
 * The collection feed against the localnet world (a 40-member generated collection with its spoofs) through
 * the real upstream: its first read of a collection (size and members from DAS), its refusals, and the
 * events it makes from blocks of wire transactions encoded with kit. The localnet has no Token Metadata or
 * Bubblegum program to run them, so these blocks are applied to the feed directly (`applyBlock`), in the
 * `getBlock` shape the follower reads; the metadata accounts they name are the world's real ones, read back
 * from the localnet to resolve their mints.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AccountRole,
  appendTransactionMessageInstructions,
  compileTransaction,
  createTransactionMessage,
  getTransactionEncoder,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
} from "@solana/kit";
import type { Address, Blockhash, Instruction } from "@solana/kit";
import bs58 from "bs58";
import { createCollections } from "../../../src/collections/collections.ts";
import { createCollectionFeed } from "../../../src/collections/feed/collection-feed.ts";
import type { CollectionFeed, WatchMessage } from "../../../src/collections/feed/collection-feed.ts";
import { createMemoryEventLog } from "../../../src/collections/feed/event-log.ts";
import type { FeedEvent } from "../../../src/collections/feed/event-log.ts";
import { feedBlockOf } from "../../../src/collections/feed/feed-block.ts";
import { encodeFeedCursor } from "../../../src/collections/feed/feed-cursor.ts";
import { SolgateError } from "../../../src/errors.ts";
import { decodeWireTransaction } from "../../../src/solana/wire-transaction.ts";
import { createUpstream } from "../../../src/upstream/upstream.ts";
import type { Upstream } from "../../../src/upstream/upstream.ts";
import { startCollectionWorld } from "../collection-world.ts";
import { json, startHttpFixture } from "../http-fixture.ts";
import { createFloorPrices } from "../../../src/collections/market/floor-prices.ts";
import { createMagicEdenSource } from "../../../src/collections/market/magic-eden.ts";
import type { CollectionWorld } from "../collection-world.ts";
import { createHash } from "node:crypto";

const TOKEN_METADATA = "metaqbxxUerdq28cj1RbAWkYQm3ybzjb6a8bt518x1s" as Address;
const BUBBLEGUM = "BGUMAp9Gq7iTEuizy4pqaxsTyUCBK68MDfK752saRPUY" as Address;
const NOOP = "noopb9bkMVfRPU8AsbpTUg8AWkHHKwYxL8jqsCR3MsN" as Address;

let world: CollectionWorld;
let upstream: Upstream;
let feed: CollectionFeed;
let log: ReturnType<typeof createMemoryEventLog>;
const watching = new AbortController();

beforeAll(async () => {
  world = await startCollectionWorld(40);
  upstream = createUpstream({ chain: "localnet", rpcUrls: [world.localnet.rpcUrl], maxRetries: 0 });
  log = createMemoryEventLog({ retentionMs: 3_600_000, maxEventsPerCollection: 1000 });
  feed = createCollectionFeed({
    upstream,
    collections: createCollections({ upstream }),
    log,
    heartbeatMs: 200,
    pollMs: 100,
  });
}, 120_000);
afterAll(async () => {
  watching.abort();
  await feed?.stop();
  await upstream?.close();
  await world?.stop();
});

async function refusal(promise: Promise<unknown>): Promise<SolgateError> {
  const e = await promise.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(SolgateError);
  return e as SolgateError;
}

const payer = bs58.encode(randomBytes(32)) as Address;
const account = (address: string, role = AccountRole.WRITABLE) => ({ address: address as Address, role });
const other = () => bs58.encode(randomBytes(32));

/** A transaction entry as `getBlock` (base64, full) gives it, with a random signature. */
function entry(
  instructions: Instruction[],
  meta: Record<string, unknown> = {},
): { transaction: [string, "base64"]; meta: Record<string, unknown> } {
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayer(payer, m),
    (m) =>
      setTransactionMessageLifetimeUsingBlockhash(
        { blockhash: bs58.encode(randomBytes(32)) as Blockhash, lastValidBlockHeight: 100n },
        m,
      ),
    (m) => appendTransactionMessageInstructions(instructions, m),
  );
  const wire = Buffer.from(getTransactionEncoder().encode(compileTransaction(message)));
  randomBytes(64).copy(wire, 1);
  return {
    transaction: [wire.toString("base64"), "base64"],
    meta: { err: null, innerInstructions: [], preTokenBalances: [], postTokenBalances: [], ...meta },
  };
}

/** Token Metadata's VerifySizedCollectionItem (30) / UnverifySizedCollectionItem (31) of `metadata` into `collection`. */
function sizedVerify(discriminator: 30 | 31, metadata: string, collection: string): Instruction {
  return {
    programAddress: TOKEN_METADATA,
    accounts: [
      account(metadata),
      account(payer),
      account(payer),
      account(collection),
      account(other()),
      account(other()),
    ],
    data: Uint8Array.of(discriminator),
  };
}

let slot = 1_000_000n;
async function applyBlock(entries: ReturnType<typeof entry>[]): Promise<void> {
  await feed.applyBlock(feedBlockOf(slot++, { transactions: entries, blockTime: 1_800_000_000 }));
}

/** Collects watch messages until `count` events came. */
async function take(stream: AsyncIterable<WatchMessage>, count: number): Promise<FeedEvent[]> {
  const events: FeedEvent[] = [];
  for await (const message of stream) {
    if ("event" in message) events.push(message.event);
    if (events.length >= count) break;
  }
  return events;
}

describe("WatchCollection refusals", () => {
  it("an address that is no collection: NOT_FOUND, as GetCollection says", async () => {
    const e = await refusal(feed.watch(world.manifest.spoofs.unverifiedMembers[0]!, "", [], watching.signal));
    expect(e.reason).toBe("NOT_FOUND");
  });

  it("a malformed cursor, and another collection's: COLLECTION_CURSOR_INVALID", async () => {
    const collection = world.generated.mint;
    expect((await refusal(feed.watch(collection, "not-a-cursor!", [], watching.signal))).reason).toBe(
      "COLLECTION_CURSOR_INVALID",
    );
    const foreign = encodeFeedCursor(world.smb.mint, log.epoch, 0n);
    expect((await refusal(feed.watch(collection, foreign, [], watching.signal))).reason).toBe(
      "COLLECTION_CURSOR_INVALID",
    );
    const ahead = encodeFeedCursor(collection, log.epoch, 99n);
    expect((await refusal(feed.watch(collection, ahead, [], watching.signal))).reason).toBe(
      "COLLECTION_CURSOR_INVALID",
    );
  });

  it("a cursor of a log that is gone (another epoch): COLLECTION_CURSOR_EXPIRED, never a silent restart", async () => {
    const stale = encodeFeedCursor(world.generated.mint, "gone", 3n);
    const e = await refusal(feed.watch(world.generated.mint, stale, [], watching.signal));
    expect(e.reason).toBe("COLLECTION_CURSOR_EXPIRED");
  });
});

describe("bounds", () => {
  it("past the collections it may follow, a watch of a new one: COLLECTION_FEED_FULL; a followed one still watches", async () => {
    const small = createCollectionFeed({
      upstream,
      collections: createCollections({ upstream }),
      log: createMemoryEventLog({ retentionMs: 3_600_000, maxEventsPerCollection: 10 }),
      maxCollections: 1,
    });
    const done = new AbortController();
    try {
      await small.watch(world.generated.mint, "", [], done.signal);
      const e = await refusal(small.watch(world.smb.mint, "", [], done.signal));
      expect(e.reason).toBe("COLLECTION_FEED_FULL");
      await small.watch(world.generated.mint, "", [], done.signal);
    } finally {
      done.abort();
      await small.stop();
    }
  });
});

describe("events from blocks", () => {
  const collection = () => world.generated.mint;
  const spoofMetadata = () => world.metadata.get(world.manifest.spoofs.unverifiedMembers[0]!)!;

  it("verify adds the item (mint read from its Metadata account), unverify removes it; the size follows", async () => {
    const stream = await feed.watch(collection(), "", [], watching.signal);
    const size = (await createCollections({ upstream }).get(collection())).itemCount;
    const spoof = spoofMetadata();
    await applyBlock([entry([sizedVerify(30, spoof.address, collection())])]);
    await applyBlock([entry([sizedVerify(31, spoof.address, collection())])]);
    const [added, removed] = await take(stream, 2);
    expect(added).toMatchObject({
      kind: "MEMBER_ADDED",
      collection: collection(),
      asset: spoof.mint,
      compressed: false,
      verifiedSize: size + 1n,
      instructionIndex: 0,
      instruction: "verifySizedCollectionItem",
    });
    expect(removed).toMatchObject({ kind: "MEMBER_REMOVED", asset: spoof.mint, verifiedSize: size });
    expect(removed!.sequence).toBe(added!.sequence + 1n);
  });

  it("a spoof naming the collection, a failed verify, a burn of a non-member: no event", async () => {
    const spoof = spoofMetadata();
    const before = (await log.newest(collection()))?.sequence ?? 0n;
    // CreateMetadataAccountV3 (33) naming the collection: the program never takes a verified flag there.
    const create: Instruction = {
      programAddress: TOKEN_METADATA,
      accounts: [account(other()), account(spoof.mint), account(payer), account(payer), account(payer)],
      data: Uint8Array.of(33, 0, 0, 0, 0),
    };
    const failed = entry([sizedVerify(30, spoof.address, collection())], { err: { InstructionError: [0, "Custom"] } });
    const burnSpoof: Instruction = {
      programAddress: TOKEN_METADATA,
      accounts: [account(spoof.address), account(payer), account(spoof.mint), account(other()), account(other())],
      data: Uint8Array.of(29),
    };
    await applyBlock([entry([create]), failed, entry([burnSpoof])]);
    expect((await log.newest(collection()))?.sequence ?? 0n).toBe(before);
  });

  it("a member's transfer (token balances) and burn (BurnNft); resuming from a cursor replays what followed", async () => {
    const member = [...world.verifiedMembers(collection())].find((id) => world.metadata.has(id))!;
    const metadata = world.metadata.get(member)!;
    const from = other();
    const to = other();
    const mark = (await log.newest(collection()))!.cursor;
    const transfer = entry(
      [
        {
          programAddress: "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA" as Address,
          accounts: [account(other()), account(other())],
          data: Uint8Array.of(3, 1, 0, 0, 0, 0, 0, 0, 0),
        },
      ],
      {
        preTokenBalances: [{ accountIndex: 1, mint: member, owner: from, uiTokenAmount: { amount: "1" } }],
        postTokenBalances: [{ accountIndex: 2, mint: member, owner: to, uiTokenAmount: { amount: "1" } }],
      },
    );
    const burn: Instruction = {
      programAddress: TOKEN_METADATA,
      accounts: [account(metadata.address), account(to), account(member), account(other()), account(other())],
      data: Uint8Array.of(29),
    };
    await applyBlock([transfer, entry([burn])]);
    const replay = await take(await feed.watch(collection(), mark, [], watching.signal), 2);
    expect(replay.map((e) => e.kind)).toEqual(["MEMBER_TRANSFERRED", "MEMBER_REMOVED"]);
    expect(replay[0]).toMatchObject({ asset: member, owner: to, previousOwner: from });
    expect(replay[1]).toMatchObject({ asset: member, instruction: "burnNft" });
    expect(replay[1]!.verifiedSize).toBe(replay[0]!.verifiedSize - 1n);
  });

  it("Bubblegum: mint_to_collection_v1 adds the leaf's asset (from its log wrapper event), transfer moves it", async () => {
    const tree = other();
    const asset = other();
    const owner = other();
    const next = other();
    const anchor = (name: string) => createHash("sha256").update(`global:${name}`).digest().subarray(0, 8);
    const leafEvent = (id: string, leafOwner: string) =>
      bs58.encode(
        Buffer.concat([
          Uint8Array.of(1, 0, 0, 0, 0, 0, 1, 0, 0),
          bs58.decode(id),
          bs58.decode(leafOwner),
          bs58.decode(leafOwner),
          Buffer.alloc(8 + 96),
        ]),
      );
    const mintAccounts = Array.from({ length: 16 }, () => account(other()));
    mintAccounts[1] = account(owner);
    mintAccounts[3] = account(tree);
    mintAccounts[8] = account(collection());
    mintAccounts[12] = account(NOOP, AccountRole.READONLY);
    const mint = entry([{ programAddress: BUBBLEGUM, accounts: mintAccounts, data: anchor("mint_to_collection_v1") }]);
    const noopIndex = (e: ReturnType<typeof entry>) => staticKeys(e).indexOf(NOOP);
    mint.meta.innerInstructions = [
      { index: 0, instructions: [{ programIdIndex: noopIndex(mint), accounts: [], data: leafEvent(asset, owner) }] },
    ];
    const transferAccounts = [
      account(other()),
      account(owner),
      account(owner),
      account(next),
      account(tree),
      account(NOOP, AccountRole.READONLY),
    ];
    const transfer = entry([
      {
        programAddress: BUBBLEGUM,
        accounts: transferAccounts,
        data: Buffer.concat([anchor("transfer"), Buffer.alloc(108)]),
      },
    ]);
    transfer.meta.innerInstructions = [
      { index: 0, instructions: [{ programIdIndex: noopIndex(transfer), accounts: [], data: leafEvent(asset, next) }] },
    ];
    const stream = await feed.watch(collection(), "", ["MEMBER_ADDED", "MEMBER_TRANSFERRED"], watching.signal);
    await applyBlock([mint, transfer]);
    const [added, moved] = await take(stream, 2);
    expect(added).toMatchObject({
      kind: "MEMBER_ADDED",
      asset,
      compressed: true,
      owner,
      instruction: "mintToCollectionV1",
    });
    expect(moved).toMatchObject({ kind: "MEMBER_TRANSFERRED", asset, owner: next, previousOwner: owner });
  });

  it("a log that dropped old events refuses a cursor before them: COLLECTION_CURSOR_EXPIRED with where it begins", async () => {
    const small = createMemoryEventLog({ retentionMs: 3_600_000, maxEventsPerCollection: 2 });
    const body = {
      collection: world.generated.mint,
      kind: "MEMBER_ADDED" as const,
      slot: 1n,
      signature: "s",
      instructionIndex: 0,
      verifiedSize: 1n,
      asset: "a",
      compressed: false,
      owner: "",
      previousOwner: "",
      time: undefined,
      instruction: "verify",
    };
    const first = (await small.append(body))!;
    await small.append(body);
    await small.append(body);
    await small.append(body);
    let error: unknown;
    try {
      await small.after(world.generated.mint, first.cursor);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SolgateError);
    expect((error as SolgateError).reason).toBe("COLLECTION_CURSOR_EXPIRED");
    expect((error as SolgateError).details.oldestCursor).toBe(encodeFeedCursor(world.generated.mint, small.epoch, 3n));
    // The event just before the oldest kept one is still a cursor that loses nothing.
    expect(
      await small.after(world.generated.mint, encodeFeedCursor(world.generated.mint, small.epoch, 2n)),
    ).toHaveLength(2);
  });
});

/** The static keys, to index an inner instruction's program (the noop) as the node would. */
function staticKeys(e: ReturnType<typeof entry>): string[] {
  return [...decodeWireTransaction(Buffer.from(e.transaction[0], "base64")).message.staticAccounts];
}

describe("FLOOR_CHANGED", () => {
  it("a new floor from the configured marketplace (Magic Eden's stats API on a fixture) is an event; an unchanged one is not", async () => {
    const me = await startHttpFixture();
    const stats = (lamports: number) => json({ symbol: "sentinels", floorPrice: lamports, listedCount: 3 });
    me.routes.set("/v2/collections/sentinels/stats", stats(1_500_000_000));
    const floorLog = createMemoryEventLog({ retentionMs: 3_600_000, maxEventsPerCollection: 100 });
    const floors = createCollectionFeed({
      upstream,
      collections: createCollections({ upstream }),
      log: floorLog,
      market: createFloorPrices({
        sources: [createMagicEdenSource({ url: me.url })],
        collections: { [world.generated.mint]: { source: "magiceden", id: "sentinels" } },
        ttlMs: 20,
        timeoutMs: 2000,
      }),
      floorPollMs: 30,
      heartbeatMs: 200,
    });
    const done = new AbortController();
    try {
      const stream = await floors.watch(world.generated.mint, "", ["FLOOR_CHANGED"], done.signal);
      // The first read is the baseline; wait until it was made, then move the floor.
      const deadline = Date.now() + 20_000;
      while (me.hitsOf("/v2/collections/sentinels/stats") === 0 && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 20));
      me.routes.set("/v2/collections/sentinels/stats", stats(1_250_000_000));
      const [changed] = await take(stream, 1);
      expect(changed).toMatchObject({
        kind: "FLOOR_CHANGED",
        collection: world.generated.mint,
        floor: { lamports: 1_250_000_000n, source: "magiceden" },
        previousFloor: { lamports: 1_500_000_000n },
        slot: 0n,
        signature: "",
      });
      expect((await floorLog.newest(world.generated.mint))?.sequence).toBe(1n);
    } finally {
      done.abort();
      await floors.stop();
      await me.close();
    }
  });
});
