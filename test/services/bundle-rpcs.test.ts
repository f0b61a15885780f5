/**
 * TransactionService's bundle RPCs end to end: the real gateway on port 0 with its embedded localnet,
 * whose own block engine takes the bundles, called with real clients on every protocol (connect-node's
 * gRPC, gRPC-Web and Connect, REST with fetch and SSE for the watch, and @grpc/grpc-js). A tipped bundle whose second
 * transaction spends what the first gave lands whole in one slot; a bundle with a failing member never
 * lands (nothing of it is on the chain) and says why. Every kind of bad bundle is refused with its reason
 * code and the block engine never hears of it; one that passes Solgate's checks but not the engine's (a lookup
 * table that does not exist) is BUNDLE_REFUSED with the engine's word, and nothing of it is held or landed.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import bs58 from "bs58";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import type { Client, Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import {
  address,
  appendTransactionMessageInstructions,
  compressTransactionMessageUsingAddressLookupTables,
  createSolanaRpc,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
} from "@solana/kit";
import type { Address, Blockhash, Instruction, KeyPairSigner, Rpc, Signature, SolanaRpcApi } from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import * as grpc from "@grpc/grpc-js";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import {
  SendBundleRequestSchema,
  SendBundleResponseSchema,
  TransactionService,
  WatchBundleRequestSchema,
  WatchBundleResponseSchema,
} from "../../gen/solgate/v1/transaction_service_pb.js";
import type {
  SendBundleRequest,
  SendBundleResponse,
  WatchBundleRequest,
  WatchBundleResponse,
} from "../../gen/solgate/v1/transaction_service_pb.js";
import { BundleStatus, TransactionStatus } from "../../gen/solgate/v1/transaction_pb.js";
import type { BundleStatusRecord } from "../../gen/solgate/v1/transaction_pb.js";
import { bundleIdOf } from "../../src/transactions/bundles.ts";
import { startRestGateway } from "../rest/rest-gateway.ts";
import type { RestGateway } from "../rest/rest-gateway.ts";

/** Jito's first mainnet tip account, which the localnet's engine serves (checked against getTipAccounts below). */
const TABLE_TIP = "96gYZGLnJYVFmbjzopPSU6QiEV5fGqZNyN9nmNhvrZU5";
const TABLE = "7Ldhs5bFpcUAXHp5SV8QcS1hFqBn6eH8QtTTrHzqp4Rq";

/** An active lookup table account file holding the tip account (agave's 56-byte header, then the addresses). */
function tableFile(): string {
  const data = new Uint8Array(56 + 32);
  const view = new DataView(data.buffer);
  view.setUint32(0, 1, true);
  view.setBigUint64(4, 0xffff_ffff_ffff_ffffn, true);
  data.set(bs58.decode(TABLE_TIP), 56);
  const file = join(mkdtempSync(join(tmpdir(), "bundle-rpcs-")), "table.json");
  writeFileSync(
    file,
    JSON.stringify({
      pubkey: TABLE,
      account: {
        lamports: 10_000_000,
        data: [Buffer.from(data).toString("base64"), "base64"],
        owner: "AddressLookupTab1e1111111111111111111111111",
        executable: false,
        rentEpoch: 0,
        space: data.length,
      },
    }),
  );
  return file;
}

let t: RestGateway;
let rpc: Rpc<SolanaRpcApi>;
let engineUrl: string;
let tips: Address[];

async function engineCall(method: string, params: unknown[]): Promise<{ result?: unknown; error?: unknown }> {
  const res = await fetch(`${engineUrl}/bundles`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return (await res.json()) as { result?: unknown; error?: unknown };
}

beforeAll(async () => {
  // The launcher hands its environment to the localnet child: the table is loaded at start.
  process.env.LOCALNET_ACCOUNTS = `-=${tableFile()}`;
  t = await startRestGateway();
  const localnetUrl = t.gateway.localnetUrl as string;
  rpc = createSolanaRpc(localnetUrl);
  engineUrl = `${localnetUrl}/api/v1`;
  tips = ((await engineCall("getTipAccounts", [])).result as string[]).map((a) => address(a));
}, 120_000);

afterAll(async () => {
  await t?.stop();
});

async function confirmed(signature: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const { value } = await rpc.getSignatureStatuses([signature as Signature]).send();
    const s = value[0]?.confirmationStatus;
    if (s === "confirmed" || s === "finalized") return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`${signature} not confirmed`);
}

async function funded(sol: number): Promise<KeyPairSigner> {
  const signer = await generateKeyPairSigner();
  await confirmed(await rpc.requestAirdrop(signer.address, BigInt(sol * 1e9) as never).send());
  return signer;
}

async function blockhash(): Promise<{ blockhash: Blockhash; lastValidBlockHeight: bigint }> {
  return (await rpc.getLatestBlockhash({ commitment: "confirmed" }).send()).value;
}

interface Built {
  wire: Uint8Array;
  signature: string;
}

async function build(
  payer: KeyPairSigner,
  instructions: Instruction[],
  lifetime: { blockhash: Blockhash; lastValidBlockHeight: bigint },
  table?: Record<Address, Address[]>,
): Promise<Built> {
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(payer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
    (m) => appendTransactionMessageInstructions(instructions, m),
  );
  const signed = await signTransactionMessageWithSigners(
    table === undefined ? message : compressTransactionMessageUsingAddressLookupTables(message, table),
  );
  return {
    wire: new Uint8Array(Buffer.from(getBase64EncodedWireTransaction(signed), "base64")),
    signature: getSignatureFromTransaction(signed),
  };
}

/**
 * A two-transaction bundle: the first moves 0.05 SOL from a funded payer to a fresh account, the second is
 * paid by that fresh account (so it can only run after the first) and moves `spend` lamports on, plus a tip.
 */
async function chainedBundle(spend: bigint): Promise<{ txs: Built[]; fresh: Address; sink: Address }> {
  const payer = await funded(1);
  const fresh = await generateKeyPairSigner();
  const sink = (await generateKeyPairSigner()).address;
  const lifetime = await blockhash();
  const first = await build(
    payer,
    [getTransferSolInstruction({ source: payer, destination: fresh.address, amount: 50_000_000n })],
    lifetime,
  );
  const second = await build(
    fresh,
    [
      getTransferSolInstruction({ source: fresh, destination: sink, amount: spend }),
      getTransferSolInstruction({ source: fresh, destination: tips[1] as Address, amount: 10_000n }),
    ],
    lifetime,
  );
  return { txs: [first, second], fresh: fresh.address, sink };
}

async function balance(a: Address): Promise<bigint> {
  return (await rpc.getBalance(a, { commitment: "confirmed" }).send()).value;
}

/** What each protocol does, as one shape: send, read, and follow until final (or confirmed). */
interface Protocol {
  send(wires: Uint8Array[]): Promise<{ id: string; status: string }>;
  get(id: string): Promise<{ status: string; reason: string; slots: (string | undefined)[]; txStatuses: string[] }>;
  /** The statuses a watch delivered, until `until` or a final one. */
  watch(id: string, until: string): Promise<string[]>;
}

const FINAL = new Set(["FINALIZED", "FAILED", "INVALID", "EXPIRED"]);

function connectProtocol(makeTransport: (url: string) => Transport): () => Protocol {
  return () => {
    const client: Client<typeof TransactionService> = createClient(TransactionService, makeTransport(t.url));
    const name = (s: BundleStatus) => BundleStatus[s];
    const view = (b: BundleStatusRecord) => ({
      status: name(b.status),
      reason: b.reason,
      slots: b.transactions.map((r) => (r.slot === undefined ? undefined : String(r.slot))),
      txStatuses: b.transactions.map((r) => TransactionStatus[r.status]),
    });
    return {
      async send(wires) {
        const { bundle } = await client.sendBundle({ chain: "localnet", transactions: wires }, { headers: t.auth });
        return { id: bundle!.bundleId, status: name(bundle!.status) };
      },
      async get(id) {
        const { bundle } = await client.getBundleStatus({ chain: "localnet", bundleId: id }, { headers: t.auth });
        return view(bundle!);
      },
      async watch(id, until) {
        const seen: string[] = [];
        for await (const event of client.watchBundle(
          { chain: "localnet", bundleId: id },
          { headers: t.auth, timeoutMs: 60_000 },
        )) {
          if (event.event.case !== "bundle") continue;
          const status = name(event.event.value.status);
          seen.push(status);
          if (status === until || FINAL.has(status)) break;
        }
        return seen;
      },
    };
  };
}

/** REST enum values as the REST form writes them, back to the proto name. */
function restStatus(value: unknown): string {
  const s = String(value);
  return s.startsWith("BUNDLE_STATUS_") ? s.slice("BUNDLE_STATUS_".length) : s.toUpperCase();
}
function restTxStatus(value: unknown): string {
  const s = String(value);
  return s.startsWith("TRANSACTION_STATUS_") ? s.slice("TRANSACTION_STATUS_".length) : s.toUpperCase();
}

const restProtocol = (): Protocol => ({
  async send(wires) {
    const res = await fetch(`${t.base}/bundles`, {
      method: "POST",
      headers: { ...t.auth, "content-type": "application/json" },
      body: JSON.stringify({ transactions: wires.map((w) => Buffer.from(w).toString("base64")) }),
    });
    const body = (await res.json()) as Record<string, unknown>;
    expect(res.status, JSON.stringify(body)).toBe(200);
    return { id: String(body.bundleId), status: restStatus(body.status) };
  },
  async get(id) {
    const res = await fetch(`${t.base}/bundles/${id}`, { headers: t.auth });
    const body = (await res.json()) as {
      status: unknown;
      reason: string;
      transactions: { slot?: unknown; status: unknown }[];
    };
    expect(res.status, JSON.stringify(body)).toBe(200);
    return {
      status: restStatus(body.status),
      reason: body.reason,
      slots: body.transactions.map((r) => (r.slot == null ? undefined : String(r.slot))),
      txStatuses: body.transactions.map((r) => restTxStatus(r.status)),
    };
  },
  async watch(id, until) {
    const abort = new AbortController();
    const res = await fetch(`${t.base}/bundles/${id}/events`, { headers: t.auth, signal: abort.signal });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const seen: string[] = [];
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let end = buffer.indexOf("\n\n");
        while (end >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          end = buffer.indexOf("\n\n");
          if (!block.startsWith("event: bundle\n")) continue;
          const data = JSON.parse(block.slice(block.indexOf("data: ") + 6)) as { status: unknown };
          const status = restStatus(data.status);
          seen.push(status);
          if (status === until || FINAL.has(status)) return seen;
        }
      }
    } finally {
      abort.abort();
    }
    return seen;
  },
});

const protocols: Record<string, () => Protocol> = {
  grpc: connectProtocol((baseUrl) => createGrpcTransport({ baseUrl })),
  "grpc-web": connectProtocol((baseUrl) => createGrpcWebTransport({ baseUrl, httpVersion: "1.1" })),
  connect: connectProtocol((baseUrl) => createConnectTransport({ baseUrl, httpVersion: "1.1" })),
  "REST (SSE watch)": restProtocol,
};

describe.each(Object.entries(protocols))("bundles over %s", (_name, make) => {
  it("a tipped bundle lands whole: both transactions in one slot, in order", async () => {
    const p = make();
    const { txs, fresh, sink } = await chainedBundle(1_000_000n);
    const sent = await p.send(txs.map((x) => x.wire));
    expect(sent.id).toBe(bundleIdOf(txs.map((x) => x.signature)));
    expect(sent.status).toBe("PENDING");
    const seen = await p.watch(sent.id, "CONFIRMED");
    // The localnet finalizes fast: a watch may see FINALIZED without a CONFIRMED between two reads.
    expect(["CONFIRMED", "FINALIZED"]).toContain(seen.at(-1));
    expect(seen.filter((s) => !["PENDING", "LANDED", "CONFIRMED", "FINALIZED"].includes(s))).toEqual([]);
    const got = await p.get(sent.id);
    expect(["CONFIRMED", "FINALIZED"]).toContain(got.status);
    expect(got.txStatuses.every((s) => s === "CONFIRMED" || s === "FINALIZED")).toBe(true);
    expect(got.slots).toHaveLength(2);
    expect(got.slots[0]).toBeDefined();
    expect(got.slots[1]).toBe(got.slots[0]);
    // The second transaction spent what the first gave: the sink holds it.
    expect(await balance(sink)).toBe(1_000_000n);
    expect(await balance(fresh)).toBeGreaterThan(0n);
  }, 90_000);

  it("a bundle with a failing member never lands, and says why", async () => {
    const p = make();
    // The second transaction moves more than the fresh account ever holds: it fails, so the first must not land.
    const { txs, fresh } = await chainedBundle(900_000_000n);
    const sent = await p.send(txs.map((x) => x.wire));
    const seen = await p.watch(sent.id, "FAILED");
    expect(seen.at(-1)).toBe("FAILED");
    const got = await p.get(sent.id);
    expect(got.status).toBe("FAILED");
    expect(got.reason).toMatch(/transaction 1/);
    // Nothing of it is on the chain.
    const { value } = await rpc.getSignatureStatuses(txs.map((x) => x.signature as Signature)).send();
    expect(value).toEqual([null, null]);
    expect(await balance(fresh)).toBe(0n);
  }, 90_000);
});

describe("bundles over @grpc/grpc-js", () => {
  it("SendBundle and WatchBundle with the reference gRPC client: the bundle lands whole", async () => {
    const client = new grpc.Client(t.url.replace("http://", ""), grpc.credentials.createInsecure());
    const metadata = new grpc.Metadata();
    metadata.set("authorization", t.auth.Authorization as string);
    try {
      const { txs, sink } = await chainedBundle(2_000_000n);
      const sent = await new Promise<SendBundleResponse>((resolve, reject) =>
        client.makeUnaryRequest<SendBundleRequest, SendBundleResponse>(
          "/solgate.v1.TransactionService/SendBundle",
          (req) => Buffer.from(toBinary(SendBundleRequestSchema, req)),
          (bytes) => fromBinary(SendBundleResponseSchema, bytes),
          create(SendBundleRequestSchema, { chain: "localnet", transactions: txs.map((x) => x.wire) }),
          metadata,
          (error, value) => (error ? reject(error) : resolve(value as SendBundleResponse)),
        ),
      );
      const id = sent.bundle!.bundleId;
      expect(id).toBe(bundleIdOf(txs.map((x) => x.signature)));
      const call = client.makeServerStreamRequest<WatchBundleRequest, WatchBundleResponse>(
        "/solgate.v1.TransactionService/WatchBundle",
        (req) => Buffer.from(toBinary(WatchBundleRequestSchema, req)),
        (bytes) => fromBinary(WatchBundleResponseSchema, bytes),
        create(WatchBundleRequestSchema, { chain: "localnet", bundleId: id }),
        metadata,
      );
      let last: BundleStatusRecord | undefined;
      try {
        for await (const event of call as AsyncIterable<WatchBundleResponse>) {
          if (event.event.case !== "bundle") continue;
          last = event.event.value;
          if (last.status === BundleStatus.CONFIRMED || last.status === BundleStatus.FINALIZED) break;
          if (last.status === BundleStatus.FAILED || last.status === BundleStatus.INVALID) break;
        }
      } finally {
        call.cancel();
      }
      expect([BundleStatus.CONFIRMED, BundleStatus.FINALIZED]).toContain(last?.status);
      expect(last!.transactions.map((r) => r.signature)).toEqual(txs.map((x) => x.signature));
      expect(await balance(sink)).toBe(2_000_000n);
    } finally {
      client.close();
    }
  }, 90_000);
});

/** A refusal's gRPC code and reason, over Connect. */
async function refusal(promise: Promise<unknown>): Promise<{ code: Code; reason: string | undefined }> {
  const caught = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(caught).toBeInstanceOf(ConnectError);
  const error = caught as ConnectError;
  return { code: error.code, reason: error.findDetails(ErrorInfoSchema)[0]?.reason };
}

describe("bad bundles are refused with their reason, and nothing reaches the block engine", () => {
  it("refuses each kind over Connect and over REST", async () => {
    expect(tips).toContain(TABLE_TIP);
    const client = createClient(TransactionService, createConnectTransport({ baseUrl: t.url, httpVersion: "1.1" }));
    const payer = await funded(2);
    const lifetime = await blockhash();
    const tip = (amount = 10_000n) =>
      getTransferSolInstruction({ source: payer, destination: tips[2] as Address, amount });
    const transfer = (lamports: bigint) =>
      getTransferSolInstruction({ source: payer, destination: address(TABLE), amount: lamports });
    const tipped = (i: number) => build(payer, [transfer(1000n + BigInt(i)), tip()], lifetime);

    const six = await Promise.all([0, 1, 2, 3, 4, 5].map(tipped));
    const one = await tipped(10);
    const unsignedWire = (await tipped(11)).wire.slice();
    unsignedWire.fill(0, 1, 65);
    const stale = await build(payer, [transfer(1200n), tip()], {
      blockhash: "4vJ9JU1bJJE96FWSJKvHsmmFADCg4gpZQff4P3bkLKi" as Blockhash,
      lastValidBlockHeight: 0n,
    });
    const untipped = await build(payer, [transfer(1300n)], lifetime);
    const smallTip = await build(payer, [transfer(1400n), tip(999n)], lifetime);
    const viaTable = await build(
      payer,
      [getTransferSolInstruction({ source: payer, destination: address(TABLE_TIP), amount: 10_000n })],
      lifetime,
      { [TABLE as Address]: [address(TABLE_TIP)] },
    );

    const cases: {
      name: string;
      wires: Uint8Array[];
      signatures: string[];
      reason: string;
      code: Code;
      http: number;
    }[] = [
      {
        name: "6 transactions",
        wires: six.map((x) => x.wire),
        signatures: six.map((x) => x.signature),
        reason: "BUNDLE_TOO_LARGE",
        code: Code.InvalidArgument,
        http: 400,
      },
      {
        name: "no transaction",
        wires: [],
        signatures: [],
        reason: "BUNDLE_TOO_LARGE",
        code: Code.InvalidArgument,
        http: 400,
      },
      {
        name: "a duplicate",
        wires: [one.wire, one.wire],
        signatures: [one.signature, one.signature],
        reason: "BUNDLE_DUPLICATE_TRANSACTION",
        code: Code.InvalidArgument,
        http: 400,
      },
      {
        name: "unsigned",
        wires: [unsignedWire],
        signatures: [],
        reason: "INVALID_TRANSACTION",
        code: Code.InvalidArgument,
        http: 400,
      },
      {
        name: "expired",
        wires: [stale.wire],
        signatures: [stale.signature],
        reason: "BLOCKHASH_EXPIRED",
        code: Code.FailedPrecondition,
        http: 409,
      },
      {
        name: "no tip",
        wires: [untipped.wire],
        signatures: [untipped.signature],
        reason: "BUNDLE_NO_TIP",
        code: Code.InvalidArgument,
        http: 400,
      },
      {
        name: "a 999-lamport tip",
        wires: [smallTip.wire],
        signatures: [smallTip.signature],
        reason: "BUNDLE_NO_TIP",
        code: Code.InvalidArgument,
        http: 400,
      },
      {
        name: "a tip through a lookup table",
        wires: [viaTable.wire],
        signatures: [viaTable.signature],
        reason: "BUNDLE_TIP_IN_LOOKUP_TABLE",
        code: Code.InvalidArgument,
        http: 400,
      },
    ];
    for (const c of cases) {
      const got = await refusal(client.sendBundle({ chain: "localnet", transactions: c.wires }, { headers: t.auth }));
      expect({ name: c.name, ...got }).toEqual({ name: c.name, code: c.code, reason: c.reason });
      const res = await fetch(`${t.base}/bundles`, {
        method: "POST",
        headers: { ...t.auth, "content-type": "application/json" },
        body: JSON.stringify({ transactions: c.wires.map((w) => Buffer.from(w).toString("base64")) }),
      });
      const body = (await res.json()) as { code?: string };
      expect({ name: c.name, status: res.status, code: body.code }).toEqual({
        name: c.name,
        status: c.http,
        code: c.reason.toLowerCase(),
      });
      // The block engine never heard of it.
      if (c.signatures.length > 0) {
        const answer = (await engineCall("getInflightBundleStatuses", [[bundleIdOf(c.signatures)]])) as {
          result: { value: ({ status: string } | null)[] };
        };
        expect(answer.result.value[0]?.status ?? "Invalid").toBe("Invalid");
      }
    }
    // And none of them is on the chain.
    const all = cases.flatMap((c) => c.signatures) as Signature[];
    const { value } = await rpc.getSignatureStatuses([...new Set(all)]).send();
    expect(value.every((v) => v === null)).toBe(true);
  }, 90_000);

  it("a bundle the block engine refuses after Solgate's checks passed is BUNDLE_REFUSED, with the engine's word", async () => {
    // Solgate reads a transaction's lookup tables only to find tip accounts in them (a table that does not
    // exist holds none); the engine resolves every table and refuses a transaction whose tables do not resolve.
    const payer = await funded(1);
    const lifetime = await blockhash();
    const missingTable = (await generateKeyPairSigner()).address;
    const refusedBundle = async () => {
      const to = (await generateKeyPairSigner()).address;
      return build(
        payer,
        [
          getTransferSolInstruction({ source: payer, destination: to, amount: 1_000_000n }),
          getTransferSolInstruction({ source: payer, destination: tips[3] as Address, amount: 10_000n }),
        ],
        lifetime,
        { [missingTable]: [to] },
      );
    };
    const overGrpc = await refusedBundle();
    const overRest = await refusedBundle();
    const engineWord = "transaction 0: its address lookup tables do not resolve";

    const client = createClient(TransactionService, createGrpcTransport({ baseUrl: t.url }));
    const caught = await client
      .sendBundle({ chain: "localnet", transactions: [overGrpc.wire] }, { headers: t.auth })
      .then(
        () => undefined,
        (e: unknown) => ConnectError.from(e),
      );
    const info = caught?.findDetails(ErrorInfoSchema)[0];
    expect({ code: caught?.code, reason: info?.reason }).toEqual({
      code: Code.FailedPrecondition,
      reason: "BUNDLE_REFUSED",
    });
    expect(info?.metadata.engineMessage).toBe(engineWord);
    expect(info?.metadata.bundleId).toBe(bundleIdOf([overGrpc.signature]));

    const res = await fetch(`${t.base}/bundles`, {
      method: "POST",
      headers: { ...t.auth, "content-type": "application/json" },
      body: JSON.stringify({ transactions: [Buffer.from(overRest.wire).toString("base64")] }),
    });
    const body = (await res.json()) as { code?: string; details?: Record<string, unknown> };
    expect({ status: res.status, code: body.code, engineMessage: body.details?.engineMessage }).toEqual({
      status: 422,
      code: "bundle_refused",
      engineMessage: engineWord,
    });

    // Nothing of either was forwarded: the engine holds neither bundle, and neither transaction is on the chain.
    const answer = (await engineCall("getInflightBundleStatuses", [
      [bundleIdOf([overGrpc.signature]), bundleIdOf([overRest.signature])],
    ])) as { result: { value: { status: string }[] } };
    expect(answer.result.value.map((v) => v.status)).toEqual(["Invalid", "Invalid"]);
    await new Promise((r) => setTimeout(r, 500)); // ten 50 ms slots, had anything been buffered
    const { value } = await rpc
      .getSignatureStatuses([overGrpc.signature as Signature, overRest.signature as Signature])
      .send();
    expect(value).toEqual([null, null]);
  }, 60_000);

  it("GetBundleStatus: an unknown id is NOT_FOUND, a malformed one INVALID_PARAMETER", async () => {
    const client = createClient(TransactionService, createGrpcTransport({ baseUrl: t.url }));
    expect(
      await refusal(client.getBundleStatus({ chain: "localnet", bundleId: "0".repeat(64) }, { headers: t.auth })),
    ).toEqual({ code: Code.NotFound, reason: "NOT_FOUND" });
    expect(await refusal(client.getBundleStatus({ chain: "localnet", bundleId: "XYZ" }, { headers: t.auth }))).toEqual({
      code: Code.InvalidArgument,
      reason: "INVALID_PARAMETER",
    });
    expect((await fetch(`${t.base}/bundles/${"0".repeat(64)}`, { headers: t.auth })).status).toBe(404);
    expect((await fetch(`${t.base}/bundles/nothex`, { headers: t.auth })).status).toBe(400);
    expect((await fetch(`${t.base}/bundles/${"0".repeat(64)}/events`, { headers: t.auth })).status).toBe(404);
  }, 30_000);
});
