/**
 * The collection feed under chaos, on real processes (issue 41's first done-when): the localnet (its own process,
 * with its world, collection traffic and Geyser), one Redis, gateways (`node src/main.ts`) whose Geyser stream
 * goes through a TCP relay this script can cut, an SSE client on each gateway that resumes by its last event id
 * after any break, and a webhook receiver (an HTTP server verifying each delivery with the `standardwebhooks`
 * library) registered for the collection. During the traffic it cuts the Geyser relay, restarts a gateway
 * (SIGTERM, then start), kills the lease holder -9 (and starts it again), and takes the receiver down for 60 s.
 *
 * At the end the chain is frozen and the expected events are read from it, independently of the gateway's
 * feed: every confirmed block of the run (getBlocks / getBlock, base64) parsed with the gateway's own parser
 * (feed-block.ts, membership-instructions.ts), membership replayed from the verified members DAS listed when the
 * watch began. Printed: expected events; per client and for the webhook, delivered (unique by idempotency key),
 * lost, unexpected, spoofs delivered, duplicates, events whose verified size differs from the replay's; the
 * final size against DAS; the delay from the slot's confirmation (the localnet's Geyser SLOT_CONFIRMED,
 * observed directly, not through the relay) to delivery. Exits 1 if an event is lost, a spoof or an event not
 * on chain is delivered, a size differs, or a delivery fails verification.
 *
 *   npx node test/bench/collection-feed-chaos.ts [--minutes 2.5] [--ops-per-slot 1]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import type { IncomingHttpHeaders } from "node:http";
import { createServer as createTcpServer, connect } from "node:net";
import type { Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { create } from "@bufbuild/protobuf";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { getAddressEncoder, getProgramDerivedAddress, getU64Encoder } from "@solana/kit";
import type { Address } from "@solana/kit";
import { startLocalnet } from "@solgate/localnet";
import { deriveKey } from "@solgate/localnet/testing";
import bs58 from "bs58";
import { Webhook } from "standardwebhooks";
import { CommitmentLevel, Geyser, SlotStatus, SubscribeRequestSchema } from "../../gen/geyser/geyser_pb.js";
import { feedBlockOf } from "../../src/collections/feed/feed-block.ts";
import { membershipChangesOf } from "../../src/collections/feed/membership-instructions.ts";
import { chainKeyPrefix, connectRedis } from "../../src/store/redis.ts";
import { FLEET_KEY, startGatewayProcess } from "../fleet/fleet-harness.ts";
import type { GatewayProcess } from "../fleet/fleet-harness.ts";
import { freePort, startRedisServer } from "../store/redis-server.ts";

const { values: args } = parseArgs({
  options: {
    minutes: { type: "string", default: "2.5" },
    "ops-per-slot": { type: "string", default: "1" },
  },
});
const TRAFFIC_MS = Number(args.minutes) * 60_000;
if (!(TRAFFIC_MS >= 120_000)) throw new Error("--minutes must be at least 2 (the receiver alone is down 60 s)");
const CHAIN = "chaos";
const PREFIX = chainKeyPrefix(CHAIN);
const TOKEN_METADATA = "metaqbxxUerdq28cj1RbAWkYQm3ybzjb6a8bt518x1s" as Address;
const BUBBLEGUM = "BGUMAp9Gq7iTEuizy4pqaxsTyUCBK68MDfK752saRPUY" as Address;
const COLLECTION = bs58.encode(deriveKey("solgate", "collection/mint"));
const auth = { authorization: `Bearer ${FLEET_KEY}` };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const started = Date.now();
const log = (text: string) => console.log(`[${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s] ${text}`);
const cleanups: (() => Promise<unknown> | unknown)[] = [];
const address = getAddressEncoder();

async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 60_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) {
      log(`${what}: not in ${timeoutMs / 1000} s`);
      return false;
    }
    await sleep(100);
  }
  return true;
}

async function rpc<T>(url: string, method: string, params: unknown): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      const response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
        signal: AbortSignal.timeout(30_000),
      });
      const body = (await response.json()) as { result?: T; error?: { message: string } };
      if (body.error !== undefined) throw new Error(`${method}: ${body.error.message}`);
      return body.result as T;
    } catch (error) {
      if (attempt >= 3) throw error;
      await sleep(500);
    }
  }
}

async function metadataAddress(mint: string): Promise<string> {
  const [pda] = await getProgramDerivedAddress({
    programAddress: TOKEN_METADATA,
    seeds: ["metadata", address.encode(TOKEN_METADATA), address.encode(mint as Address)],
  });
  return pda;
}

async function assetId(tree: string, nonce: bigint): Promise<string> {
  const [pda] = await getProgramDerivedAddress({
    programAddress: BUBBLEGUM,
    seeds: ["asset", address.encode(tree as Address), getU64Encoder().encode(nonce)],
  });
  return pda;
}

const percentile = (values: readonly number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
};

// ---- The localnet: its own process, world, collection traffic, Geyser. Confirmed = processed (confirmSlots
// 0), so the members DAS lists when the chain is frozen are exactly those of the last confirmed slot.
const dir = mkdtempSync(join(tmpdir(), "solgate-chaos-"));
cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
const localnet = await startLocalnet({
  startTimeoutMs: 120_000,
  confirmSlots: 0,
  world: { collectionSize: 60, tokenHolders: 50, smallMintHolders: [5, 5], nftOwners: 50, dir },
  traffic: { ratePerSlot: 1, collectionOpsPerSlot: Number(args["ops-per-slot"]) },
  geyser: true,
});
cleanups.push(() => localnet.stop());
await localnet.loaded;
log(`localnet ${localnet.rpcUrl}, Geyser ${localnet.geyserUrl}`);

// ---- When each slot was confirmed, as the localnet's Geyser says (created_at), straight from it.
const confirmedAt = new Map<bigint, number>();
const geyserAbort = new AbortController();
cleanups.push(() => geyserAbort.abort());
{
  const geyser = createClient(Geyser, createGrpcTransport({ baseUrl: localnet.geyserUrl! }));
  async function* request() {
    yield create(SubscribeRequestSchema, {
      commitment: CommitmentLevel.PROCESSED,
      slots: { chaos: { filterByCommitment: false } },
    });
    await new Promise((resolve) => geyserAbort.signal.addEventListener("abort", resolve));
  }
  void (async () => {
    for await (const update of geyser.subscribe(request(), { signal: geyserAbort.signal }))
      if (update.updateOneof.case === "slot" && update.updateOneof.value.status === SlotStatus.SLOT_CONFIRMED)
        confirmedAt.set(
          update.updateOneof.value.slot,
          update.createdAt === undefined ? Date.now() : timestampMs(update.createdAt),
        );
  })().catch((error: unknown) => {
    if (!geyserAbort.signal.aborted) log(`the confirmation observer's stream ended: ${String(error)}`);
  });
}

// ---- A TCP relay in front of the localnet's Geyser: `cut(ms)` drops every connection and refuses new ones.
const geyserTarget = new URL(localnet.geyserUrl!);
const relaySockets = new Set<Socket>();
let relayRefusing = false;
const relay = createTcpServer((client) => {
  if (relayRefusing) {
    client.destroy();
    return;
  }
  const upstream = connect(Number(geyserTarget.port), geyserTarget.hostname);
  relaySockets.add(client).add(upstream);
  const drop = () => {
    client.destroy();
    upstream.destroy();
    relaySockets.delete(client);
    relaySockets.delete(upstream);
  };
  client.on("error", drop).on("close", drop);
  upstream.on("error", drop).on("close", drop);
  client.pipe(upstream);
  upstream.pipe(client);
});
await new Promise<void>((resolve) => relay.listen(0, "127.0.0.1", resolve));
cleanups.push(() => relay.close());
const relayUrl = `http://127.0.0.1:${(relay.address() as { port: number }).port}`;
async function cutGeyser(ms: number): Promise<void> {
  relayRefusing = true;
  log(`Geyser relay: ${relaySockets.size / 2} connection(s) dropped, new ones refused for ${ms / 1000} s`);
  for (const socket of relaySockets) socket.destroy();
  relaySockets.clear();
  await sleep(ms);
  relayRefusing = false;
}

// ---- Redis and the gateways.
const redisServer = await startRedisServer();
cleanups.push(() => redisServer.stop());
const redis = await connectRedis({ topology: { kind: "single", url: redisServer.url } });
cleanups.push(() => redis.close());

const gatewayPorts = [await freePort(), await freePort()];
const gateways: (GatewayProcess | undefined)[] = [undefined, undefined];
async function startGateway(i: number): Promise<void> {
  const gateway = await startGatewayProcess({
    rpcUrl: localnet.rpcUrl,
    wsUrl: localnet.wsUrl,
    chain: CHAIN,
    redisUrl: redisServer.url,
    port: gatewayPorts[i]!,
    extra: {
      SOLGATE_GEYSER_URL: relayUrl,
      SOLGATE_FEED_HEARTBEAT_MS: "2000",
      SOLGATE_WEBHOOK_ALLOW_PRIVATE_URLS: "1",
    },
  });
  gateways[i] = gateway;
  gateway.child.once("exit", () => {
    if (gateways[i] === gateway) gateways[i] = undefined;
  });
}
cleanups.push(() => Promise.all(gateways.map((g) => g?.kill())));

// ---- Delivered events, per client, first arrival and count by idempotency key.
interface Delivered {
  slot: bigint;
  kind: string;
  assetId: string;
  verifiedSize: bigint;
  sequence: bigint;
  at: number;
  count: number;
}
type EventJson = {
  kind: string;
  sequence: string;
  slot: string;
  signature: string;
  instructionIndex: number;
  innerInstructionIndex?: number;
  verifiedSize: string;
  assetId: string;
};
const keyOf = (e: { slot: string | bigint; signature: string; instructionIndex: number; inner?: number }) =>
  `${e.slot}:${e.signature}:${e.instructionIndex}:${e.inner ?? "-"}`;

interface Sink {
  name: string;
  events: Map<string, Delivered>;
  received: number;
  reconnects: number;
}
function record(sink: Sink, data: EventJson): void {
  // REST form names kinds in kebab case (`member-added`), webhook bodies as the enum (`MEMBER_ADDED`).
  const kind = data.kind.toUpperCase().replaceAll("-", "_");
  if (kind === "FLOOR_CHANGED") return;
  sink.received++;
  const key = keyOf({ ...data, inner: data.innerInstructionIndex });
  const known = sink.events.get(key);
  if (known !== undefined) known.count++;
  else
    sink.events.set(key, {
      slot: BigInt(data.slot),
      kind,
      assetId: data.assetId,
      verifiedSize: BigInt(data.verifiedSize),
      sequence: BigInt(data.sequence),
      at: Date.now(),
      count: 1,
    });
}

/** An SSE client of gateway `home` (the other one while it is down) resuming from its last event id. */
function sseClient(home: number): Sink & { stop(): void } {
  const abort = new AbortController();
  const sink = { name: `SSE client on gateway ${home + 1}`, events: new Map(), received: 0, reconnects: -1 };
  let lastId: string | undefined;
  void (async () => {
    while (!abort.signal.aborted) {
      const gateway = gateways[home] ?? gateways[1 - home];
      if (gateway === undefined) {
        await sleep(200);
        continue;
      }
      sink.reconnects++;
      try {
        const response = await fetch(`${gateway.url}/v1/${CHAIN}/collections/${COLLECTION}/events`, {
          headers: { ...auth, ...(lastId === undefined ? {} : { "last-event-id": lastId }) },
          signal: abort.signal,
        });
        if (response.status !== 200) throw new Error(`${response.status} ${await response.text()}`);
        const decoder = new TextDecoder();
        let buffer = "";
        for await (const chunk of response.body! as unknown as AsyncIterable<Uint8Array>) {
          buffer += decoder.decode(chunk, { stream: true });
          let end: number;
          while ((end = buffer.indexOf("\n\n")) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const fields = new Map<string, string>();
            for (const line of block.split("\n")) {
              const colon = line.indexOf(":");
              if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1).trimStart());
            }
            if (!fields.has("data") || !fields.has("id")) continue;
            record(sink, JSON.parse(fields.get("data")!) as EventJson);
            lastId = fields.get("id")!;
          }
        }
      } catch (error) {
        if (abort.signal.aborted) return;
        if (!String(error).includes("terminated") && !String(error).includes("ECONNREFUSED"))
          log(`${sink.name}: ${String(error).slice(0, 200)}`);
      }
      // Its home gateway has gone (or was never up): resume on whichever is up, from the last event id.
      await sleep(200);
    }
  })();
  return Object.assign(sink, { stop: () => abort.abort() });
}

// ---- The webhook receiver: verifies each delivery with standardwebhooks; `down(ms)` closes it meanwhile.
const hookSink: Sink & { verified: number; refused: number; attemptsWhileUp: number } = {
  name: "webhook receiver",
  events: new Map(),
  received: 0,
  reconnects: 0,
  verified: 0,
  refused: 0,
  attemptsWhileUp: 0,
};
const deliveryIds = new Map<string, number>();
let verifier: Webhook | undefined;
const pick = (headers: IncomingHttpHeaders, name: string) => (typeof headers[name] === "string" ? headers[name] : "");
const receiver = createHttpServer(async (req, res) => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks).toString("utf8");
  const headers = {
    "webhook-id": pick(req.headers, "webhook-id"),
    "webhook-timestamp": pick(req.headers, "webhook-timestamp"),
    "webhook-signature": pick(req.headers, "webhook-signature"),
  };
  hookSink.attemptsWhileUp++;
  let event: EventJson;
  try {
    event = verifier!.verify(body, headers) as EventJson;
  } catch (error) {
    hookSink.refused++;
    log(`webhook: a delivery failed verification: ${String(error)}`);
    res.writeHead(401).end();
    return;
  }
  hookSink.verified++;
  deliveryIds.set(headers["webhook-id"], (deliveryIds.get(headers["webhook-id"]) ?? 0) + 1);
  record(hookSink, event);
  res.writeHead(204).end();
});
const receiverPort = await freePort();
const listenReceiver = () => new Promise<void>((resolve) => receiver.listen(receiverPort, "127.0.0.1", resolve));
await listenReceiver();
cleanups.push(() => {
  receiver.closeAllConnections();
  receiver.close();
});
async function receiverDown(ms: number): Promise<void> {
  await new Promise<void>((resolve) => {
    receiver.close(() => resolve());
    receiver.closeAllConnections();
  });
  await sleep(ms);
  await listenReceiver();
}

let failed = false;
try {
  // ---- The chain frozen while the watches begin: the gateways' first read of the collection (DAS) and ours
  // see the same members, and every change after it is in a slot after `startSlot`.
  await localnet.control({ freeze: true });
  await startGateway(0);
  await until(async () => (await redis.run("c", (c) => c.exists(`${PREFIX}fee-lease`))) === 1, "gateway 1's lease");
  await startGateway(1);
  log(`gateways on ${gatewayPorts.join(", ")}; gateway 1 holds the lease`);
  const clients = [sseClient(0), sseClient(1)];
  cleanups.push(() => clients.forEach((c) => c.stop()));
  const created = await fetch(`${gateways[0]!.url}/v1/${CHAIN}/webhooks`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ url: `http://127.0.0.1:${receiverPort}/hook`, collections: [COLLECTION] }),
  });
  const webhook = (await created.json()) as { webhook: { id: string }; secret: string };
  if (created.status !== 200) throw new Error(`CreateWebhook: ${created.status} ${JSON.stringify(webhook)}`);
  verifier = new Webhook(webhook.secret);
  await until(
    async () => (await redis.run("c", (c) => c.hExists(`${PREFIX}feed:sizes`, COLLECTION))) === 1,
    "the collection's first read",
  );
  const startSlot = BigInt(await rpc<number>(localnet.rpcUrl, "getSlot", [{ commitment: "confirmed" }]));
  type DasAsset = { id: string; compression?: { compressed?: boolean }; grouping: { verified?: boolean }[] };
  const group = (unverified: boolean) =>
    rpc<{ total: number; items: DasAsset[] }>(localnet.rpcUrl, "getAssetsByGroup", {
      groupKey: "collection",
      groupValue: COLLECTION,
      page: 1,
      limit: 1000,
      ...(unverified ? { options: { showUnverifiedCollections: true } } : {}),
    });
  const initial = await group(false);
  const keyOfAsset = (a: DasAsset) => (a.compression?.compressed === true ? a.id : metadataAddress(a.id));
  const members = new Set(await Promise.all(initial.items.map(keyOfAsset)));
  log(
    `collection ${COLLECTION}: ${initial.total} verified members at slot ${startSlot}; traffic for ${TRAFFIC_MS / 1000} s`,
  );
  await localnet.control({ freeze: false });

  // ---- The chaos, on a schedule from the traffic's start.
  const t0 = Date.now();
  const at = (s: number) => sleep(Math.max(0, t0 + s * 1000 - Date.now()));
  const faults: Promise<void>[] = [];
  faults.push(
    (async () => {
      await at(15);
      log("Geyser stream cut");
      await cutGeyser(10_000);
      log("Geyser relay open again");
    })(),
    (async () => {
      await at(35);
      log("gateway 2 restarted: SIGTERM");
      await gateways[1]?.stop();
      await startGateway(1);
      log("gateway 2 up again");
    })(),
    (async () => {
      await at(55);
      // The lease's value names its holder: if it changes after gateway 1 dies, gateway 1 held it.
      const lease = () => redis.run("c", (c) => c.get(`${PREFIX}fee-lease`));
      const holder = await lease();
      log("gateway 1 (the lease holder) killed -9");
      const killedAt = Date.now();
      await gateways[0]?.kill();
      void until(async () => ![holder, null].includes(await lease()), "the lease taken over", 30_000).then(
        (ok) =>
          ok && log(`lease taken over by gateway 2 ${((Date.now() - killedAt) / 1000).toFixed(1)} s after the kill`),
      );
      await sleep(10_000);
      await startGateway(0);
      log("gateway 1 up again");
    })(),
    (async () => {
      await at(75);
      log("webhook receiver down for 60 s");
      await receiverDown(60_000);
      log("webhook receiver up again");
    })(),
    (async () => {
      await at(100);
      log("Geyser stream cut again (5 s)");
      await cutGeyser(5_000);
    })(),
  );
  await at(TRAFFIC_MS / 1000);
  await Promise.all(faults);
  await localnet.control({ freeze: true });
  const endSlot = BigInt(await rpc<number>(localnet.rpcUrl, "getSlot", [{ commitment: "confirmed" }]));
  log(`traffic stopped at slot ${endSlot}; reading the chain's blocks ${startSlot + 1n}..${endSlot}`);

  // ---- The expected events: the chain's blocks parsed by the gateway's parser, membership replayed.
  const expected = new Map<string, { slot: bigint; kind: string; size: bigint }>();
  const namedByVerify = new Set<string>();
  let size = BigInt(initial.total);
  let failedTransactions = 0;
  const slots = await rpc<number[]>(localnet.rpcUrl, "getBlocks", [
    Number(startSlot + 1n),
    Number(endSlot),
    { commitment: "confirmed" },
  ]);
  for (const slot of slots) {
    const block = await rpc<{ transactions: { meta: { err: unknown } }[] }>(localnet.rpcUrl, "getBlock", [
      slot,
      {
        encoding: "base64",
        transactionDetails: "full",
        maxSupportedTransactionVersion: 0,
        rewards: false,
        commitment: "confirmed",
      },
    ]);
    failedTransactions += block.transactions.filter((t) => t.meta.err !== null).length;
    for (const tx of feedBlockOf(BigInt(slot), block).transactions)
      for (const change of membershipChangesOf(tx)) {
        if (change.collection !== undefined && change.collection !== COLLECTION) continue;
        const item =
          change.metadata ??
          (change.leaf !== undefined
            ? await assetId(change.leaf.tree, change.leaf.nonce)
            : change.compressed
              ? change.asset!
              : await metadataAddress(change.asset!));
        const key = keyOf({
          slot: BigInt(slot),
          signature: tx.signature,
          instructionIndex: change.instructionIndex,
          inner: change.innerIndex,
        });
        let kind: string | undefined;
        if (change.kind === "added") {
          namedByVerify.add(item);
          if (!members.has(item)) {
            members.add(item);
            size++;
            kind = "MEMBER_ADDED";
          }
        } else if (change.kind === "removed") {
          namedByVerify.add(item);
          if (members.delete(item)) size--;
          kind = "MEMBER_REMOVED";
        } else if (members.has(item)) {
          if (change.kind === "burned") {
            members.delete(item);
            size--;
            kind = "MEMBER_REMOVED";
          } else kind = "MEMBER_TRANSFERRED";
        }
        if (kind !== undefined) expected.set(key, { slot: BigInt(slot), kind, size });
      }
  }
  const finalDas = await group(false);
  const everyItem = await group(true);
  // Spoofs: items naming the collection, unverified, never the object of a verify or unverify on chain.
  const spoofs = new Set<string>();
  for (const asset of everyItem.items)
    if (asset.grouping[0]?.verified === false && !namedByVerify.has(await keyOfAsset(asset))) spoofs.add(asset.id);
  log(
    `${slots.length} blocks, ${expected.size} expected events (${failedTransactions} failed transactions skipped); ` +
      `${spoofs.size} spoofed items in DAS; final verified size: DAS ${finalDas.total}, replay ${size}`,
  );

  // ---- Wait for every sink to have every expected event (the webhook retries with backoff after its outage).
  // Each waits until complete, or until nothing new has come for a while (a loss is then final): the webhook's
  // next retry after its outage can be a minute away (backoff doubling from 1 s).
  const complete = (sink: Sink) => [...expected.keys()].every((k) => sink.events.has(k));
  async function settle(sinks: Sink[], what: string, quietMs: number): Promise<void> {
    let seen = -1;
    let since = Date.now();
    await until(
      () => {
        const now = sinks.reduce((n, s) => n + s.received, 0);
        if (now !== seen) [seen, since] = [now, Date.now()];
        return sinks.every(complete) || Date.now() - since > quietMs;
      },
      what,
      300_000,
    );
    if (!sinks.every(complete)) log(`${what}: still missing events after ${quietMs / 1000} s without a new one`);
  }
  await settle(clients, "every SSE client has every event", 15_000);
  await settle([hookSink], "the webhook receiver has every event", 90_000);
  await sleep(2_000); // late duplicates, if any

  // ---- The table.
  const rows: string[][] = [];
  const delays: number[] = [];
  let hard = 0;
  const fails: string[] = [];
  const check = (ok: boolean, what: string) => {
    if (!ok) {
      hard++;
      fails.push(what);
    }
  };
  check(finalDas.total === Number(size), `final size: DAS ${finalDas.total} vs the chain's replay ${size}`);
  for (const sink of [...clients, hookSink]) {
    const lost = [...expected.keys()].filter((k) => !sink.events.has(k));
    const unexpected = [...sink.events.keys()].filter((k) => !expected.has(k));
    const spoofed = [...sink.events.values()].filter((e) => spoofs.has(e.assetId));
    const wrongSize = [...expected].filter(([k, e]) => {
      const got = sink.events.get(k);
      return got !== undefined && (got.verifiedSize !== e.size || got.kind !== e.kind);
    });
    const last = [...sink.events.values()].sort((a, b) => Number(b.sequence - a.sequence))[0];
    const sinkDelays: number[] = [];
    for (const [k, e] of sink.events) {
      const confirmed = confirmedAt.get(e.slot);
      if (expected.has(k) && confirmed !== undefined) sinkDelays.push(e.at - confirmed);
    }
    if (sink !== hookSink) delays.push(...sinkDelays);
    const unique = sink.events.size;
    const duplicates = sink.received - unique;
    rows.push([
      sink.name,
      String(unique),
      String(lost.length),
      String(unexpected.length),
      String(spoofed.length),
      `${duplicates} (${((100 * duplicates) / Math.max(1, unique)).toFixed(2)}%)`,
      String(wrongSize.length),
      last === undefined ? "-" : String(last.verifiedSize),
      `${percentile(sinkDelays, 50).toFixed(0)} / ${percentile(sinkDelays, 99).toFixed(0)} / ${Math.max(...sinkDelays).toFixed(0)}`,
      String(sink.reconnects),
    ]);
    check(lost.length === 0, `${sink.name}: ${lost.length} lost (${lost.slice(0, 3).join(", ")})`);
    check(
      unexpected.length === 0,
      `${sink.name}: ${unexpected.length} not on chain (${unexpected.slice(0, 3).join(", ")})`,
    );
    check(spoofed.length === 0, `${sink.name}: ${spoofed.length} spoofs delivered`);
    check(
      wrongSize.length === 0,
      `${sink.name}: ${wrongSize.length} events whose kind or verified size differs from the replay's`,
    );
    check(
      last === undefined || last.verifiedSize === BigInt(finalDas.total),
      `${sink.name}: last size ${last?.verifiedSize} vs DAS ${finalDas.total}`,
    );
  }
  check(hookSink.refused === 0, `webhook: ${hookSink.refused} deliveries failed verification`);
  const header = [
    "sink",
    "delivered (unique)",
    "lost",
    "not on chain",
    "spoofs",
    "duplicates",
    "size/kind != replay",
    "last size",
    "confirmed->delivered p50 / p99 / max ms",
    "(re)connects",
  ];
  console.log("");
  console.log(
    `expected events ${expected.size} over ${slots.length} blocks (slots ${startSlot + 1n}..${endSlot}); ` +
      `by kind: ${[...Map.groupBy(expected.values(), (e) => e.kind)].map(([k, v]) => `${k} ${v.length}`).join(", ")}`,
  );
  console.log(
    `final verified size: DAS ${finalDas.total}, the chain's replay ${size} (start ${initial.total}); ${spoofs.size} spoofed items named the collection`,
  );
  console.log(`| ${header.join(" | ")} |\n| ${header.map(() => "---").join(" | ")} |`);
  for (const row of rows) console.log(`| ${row.join(" | ")} |`);
  console.log(
    `SSE clients together: confirmed -> delivered p50 ${percentile(delays, 50).toFixed(0)} ms, p99 ${percentile(delays, 99).toFixed(0)} ms (${delays.length} deliveries)`,
  );
  console.log(
    `webhook: ${hookSink.verified} verified deliveries (${hookSink.refused} refused), ${deliveryIds.size} distinct webhook-ids, ` +
      `${[...deliveryIds.values()].filter((n) => n > 1).length} webhook-ids delivered more than once`,
  );
  if (hard > 0) {
    failed = true;
    console.log(`\nFAILED (${hard}):\n  ${fails.join("\n  ")}`);
  } else console.log("\nall hard targets met");
  for (const [i, g] of gateways.entries())
    if (g !== undefined && /"level":("error"|"fatal"|50|60)/.test(g.logs()))
      log(
        `gateway ${i + 1} logged errors:\n${g
          .logs()
          .split("\n")
          .filter((l) => /"level":("error"|"fatal"|50|60)/.test(l))
          .slice(-5)
          .join("\n")}`,
      );
} catch (error) {
  failed = true;
  console.error(error);
} finally {
  for (const fn of cleanups.reverse()) await Promise.resolve(fn()).catch(() => {});
}
process.exit(failed ? 1 : 0);
