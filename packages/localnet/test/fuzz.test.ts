/**
 * Fuzzing the localnet over HTTP: 100,000 mutated transactions (byte flips, truncations,
 * insertions, header and index tweaks, some re-signed so they pass signature checks and reach
 * LiteSVM's execution) and 20,000 malformed JSON-RPC calls, in seeded batches, plus garbage
 * bodies. Every answer must be a well-formed JSON-RPC response with a code a node would use
 * (never -32603), and the localnet must end healthy and still execute a transfer.
 */
import { createPrivateKey, generateKeyPairSync, sign, type KeyObject } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import bs58 from "bs58";
import { createPrng, randomInt } from "../src/prng.ts";
import { decodeTransaction } from "../src/wire/decode-transaction.ts";
import { stringifyJson } from "../src/rpc/json.ts";
import { startTestLocalnet, waitFor, type TestLocalnet } from "./helpers.ts";

const TRANSACTIONS = 100_000;
const MALFORMED_CALLS = 20_000;
const GARBAGE_BODIES = 300;
const BATCH = 1000;
const ALLOWED_CODES = new Set([
  -32700, -32600, -32601, -32602, -32002, -32003, -32004, -32005, -32001, -32007, -32008, -32015, -32016,
]);

const random = createPrng(0x5eed);
const pick = <T>(items: readonly T[]): T => items[randomInt(random, items.length)]!;

let net: TestLocalnet;
beforeAll(async () => {
  // 32-slot epochs: the malformed calls include getLeaderSchedule, whose answer is one entry per slot
  // of the epoch (432,000 under the default schedule).
  net = await startTestLocalnet({ maxBodyBytes: 16 * 1024 * 1024, slotsPerEpoch: 32 });
});
afterAll(async () => {
  await net?.stop();
});

/** An ed25519 key we can sign raw messages with (to re-sign mutated messages). */
function keypair(): { address: string; key: Uint8Array; privateKey: KeyObject } {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const key = new Uint8Array(Buffer.from(publicKey.export({ format: "jwk" }).x!, "base64url"));
  return {
    address: bs58.encode(key),
    key,
    privateKey: createPrivateKey(privateKey.export({ format: "pem", type: "pkcs8" })),
  };
}

function shortVec(n: number): number[] {
  const out: number[] = [];
  do {
    let byte = n & 0x7f;
    n >>= 7;
    if (n) byte |= 0x80;
    out.push(byte);
  } while (n);
  return out;
}

/** A signed transfer (legacy or v0) from `payer`, optionally with compute budget instructions. */
function transfer(
  payer: ReturnType<typeof keypair>,
  to: Uint8Array,
  blockhash: string,
  v0: boolean,
  priced: boolean,
  lamports?: bigint,
): Uint8Array {
  const system = new Uint8Array(32);
  const budget = bs58.decode("ComputeBudget111111111111111111111111111111");
  const keys = priced ? [payer.key, to, system, budget] : [payer.key, to, system];
  const amount = new Uint8Array(8);
  new DataView(amount.buffer).setBigUint64(0, lamports ?? BigInt(1 + randomInt(random, 1_000_000)), true);
  const instructions: number[] = [];
  let count = 1;
  if (priced) {
    count = 3;
    instructions.push(
      3,
      0,
      5,
      2,
      ...[1000 + randomInt(random, 100_000), 0, 0, 0]
        .flatMap((v, i) => (i === 0 ? [v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, 0] : []))
        .slice(0, 4),
    );
    instructions.push(3, 0, 9, 3, randomInt(random, 256), 0, 0, 0, 0, 0, 0, 0);
  }
  instructions.push(2, 2, 0, 1, 12, 2, 0, 0, 0, ...amount);
  const message = [
    ...(v0 ? [0x80] : []),
    1,
    0,
    priced ? 2 : 1,
    ...shortVec(keys.length),
    ...keys.flatMap((k) => [...k]),
    ...bs58.decode(blockhash),
    ...shortVec(count),
    ...instructions,
    ...(v0 ? [0] : []),
  ];
  return signed(payer, new Uint8Array(message));
}

function signed(payer: ReturnType<typeof keypair>, message: Uint8Array, signatures = 1): Uint8Array {
  const signature = sign(null, message, payer.privateKey);
  const out = [...shortVec(signatures), ...signature];
  for (let i = 1; i < signatures; i++) out.push(...new Uint8Array(64));
  return new Uint8Array([...out, ...message]);
}

/** One mutation of a valid transaction. */
function mutate(tx: Uint8Array, payer: ReturnType<typeof keypair>): Uint8Array {
  const bytes = tx.slice();
  const messageStart = 65;
  switch (randomInt(random, 9)) {
    case 0: // flip bytes anywhere
      for (let n = 1 + randomInt(random, 4); n > 0; n--)
        bytes[randomInt(random, bytes.length)] = randomInt(random, 256);
      return bytes;
    case 1: // truncate
      return bytes.slice(0, randomInt(random, bytes.length));
    case 2: // append junk
      return new Uint8Array([
        ...bytes,
        ...Array.from({ length: 1 + randomInt(random, 40) }, () => randomInt(random, 256)),
      ]);
    case 3: {
      // insert or delete in the middle
      const at = randomInt(random, bytes.length);
      if (random() < 0.5)
        return new Uint8Array([
          ...bytes.slice(0, at),
          ...Array.from({ length: 1 + randomInt(random, 8) }, () => randomInt(random, 256)),
          ...bytes.slice(at),
        ]);
      return new Uint8Array([...bytes.slice(0, at), ...bytes.slice(at + 1 + randomInt(random, 8))]);
    }
    case 4: // signature count
      bytes[0] = pick([0, 2, 3, 0x7f, 0x80, 0xff]);
      return bytes;
    case 5: {
      // header counts, re-signed so the runtime sees a valid signature over an odd message
      const message = bytes.slice(messageStart);
      const h = message[0]! & 0x80 ? 1 : 0;
      message[h + randomInt(random, 3)] = pick([0, 1, 2, 3, 4, 255]);
      return signed(payer, message);
    }
    case 6: {
      // instruction indexes and data, re-signed
      const message = bytes.slice(messageStart);
      for (let n = 1 + randomInt(random, 3); n > 0; n--) {
        const at = message.length - 1 - randomInt(random, Math.min(40, message.length));
        message[at] = pick([0, 1, 2, 3, 4, 5, 127, 128, 255, randomInt(random, 256)]);
      }
      return signed(payer, message);
    }
    case 7: {
      // the message-level version byte and lookups, re-signed
      const message = bytes.slice(messageStart);
      if (message[0]! & 0x80) message[0] = pick([0x81, 0xff, 0x00]);
      else message[message.length - 1] = randomInt(random, 256);
      return signed(payer, message);
    }
    default: {
      // valid signature over random message bytes of plausible length
      const message = new Uint8Array(100 + randomInt(random, 200)).map(() => randomInt(random, 256));
      message[0] = pick([1, 0x80]);
      return signed(payer, message);
    }
  }
}

/** A random JSON value, biased towards what parameter parsers meet. */
function junk(depth = 0): unknown {
  switch (randomInt(random, depth > 2 ? 8 : 11)) {
    case 0:
      return null;
    case 1:
      return random() < 0.5;
    case 2:
      return pick([0, -1, 1.5, 2 ** 53, 1e300, -0, 18446744073709551615n, 18446744073709551616n, 432000]);
    case 3:
      return pick([
        "",
        "processed",
        "finalized",
        "confirmed",
        "base64",
        "base58",
        "jsonParsed",
        "json",
        "full",
        "none",
        "signatures",
      ]);
    case 4:
      return bs58.encode(new Uint8Array(pick([0, 1, 31, 32, 33, 63, 64, 65, 200])).map(() => randomInt(random, 256)));
    case 5:
      return Buffer.from(new Uint8Array(randomInt(random, 300)).map(() => randomInt(random, 256))).toString("base64");
    case 6:
      return `0OIl+/=${"x".repeat(randomInt(random, 30))}`;
    case 7:
      return "A".repeat(pick([1700, 3000]));
    case 8:
      return Array.from({ length: randomInt(random, 4) }, () => junk(depth + 1));
    default: {
      const keys = [
        "commitment",
        "encoding",
        "minContextSlot",
        "skipPreflight",
        "sigVerify",
        "replaceRecentBlockhash",
        "accounts",
        "maxSupportedTransactionVersion",
        "transactionDetails",
        "rewards",
        "searchTransactionHistory",
        "preflightCommitment",
        "maxRetries",
        "innerInstructions",
        "addresses",
        "dataSlice",
        "filters",
      ];
      return Object.fromEntries(Array.from({ length: randomInt(random, 4) }, () => [pick(keys), junk(depth + 1)]));
    }
  }
}

const METHODS = [
  "getHealth",
  "getVersion",
  "getSlot",
  "getBlockHeight",
  "getEpochInfo",
  "getLatestBlockhash",
  "isBlockhashValid",
  "getFeeForMessage",
  "requestAirdrop",
  "sendTransaction",
  "simulateTransaction",
  "getSignatureStatuses",
  "getTransaction",
  "getBlock",
  "getBlocks",
  "getBlocksWithLimit",
  "getBlockTime",
  "getRecentPrioritizationFees",
  "getAccountInfo",
  "getBalance",
  "getMultipleAccounts",
  "getProgramAccounts",
  "getTokenAccountsByOwner",
  "getMinimumBalanceForRentExemption",
  "getSupply",
  "getLargestAccounts",
  "getVoteAccounts",
  "getLeaderSchedule",
  "getSlotLeaders",
  "getBlockProduction",
  "getInflationReward",
  "getSignaturesForAddress",
  "getBlockCommitment",
  "getHighestSnapshotSlot",
  "getInflationGovernor",
  "noSuchMethod",
  "localnet_getFaults",
];

/** A malformed (or merely odd) call object. */
function malformedCall(id: number): unknown {
  const r = random();
  if (r < 0.05) return pick([null, 1, "x", [], true]);
  if (r < 0.1) return { jsonrpc: pick(["1.0", 2, null]), id, method: pick(METHODS) };
  if (r < 0.15) return { jsonrpc: "2.0", id, method: pick([5, null, {}]) };
  if (r < 0.2) return { jsonrpc: "2.0", id, method: pick(METHODS), params: junk() };
  return {
    jsonrpc: "2.0",
    id,
    method: pick(METHODS),
    params: Array.from({ length: randomInt(random, 4) }, () => junk()),
  };
}

function checkResponses(requests: { id?: unknown }[], responses: any[]): void {
  const expectedIds = new Set(
    requests.filter((r) => r !== null && typeof r === "object" && "id" in r).map((r) => r.id),
  );
  for (const response of responses) {
    expect(response.jsonrpc).toBe("2.0");
    if (response.error) {
      expect(ALLOWED_CODES, `unexpected error ${stringifyJson(response)}`).toContain(response.error.code);
      expect(typeof response.error.message).toBe("string");
    } else {
      expect("result" in response).toBe(true);
      expect(expectedIds.has(response.id)).toBe(true);
    }
  }
}

it(`survives ${TRANSACTIONS.toLocaleString("en")} mutated transactions and ${MALFORMED_CALLS.toLocaleString("en")} malformed calls`, async () => {
  const started = performance.now();
  const payer = keypair();
  const airdrop = (await net.call("requestAirdrop", [payer.address, 1_000_000_000_000])).result;
  await waitFor("airdrop", async () => (await net.call("getSignatureStatuses", [[airdrop]])).result.value[0]);
  const blockhash = (await net.call("getLatestBlockhash", [{ commitment: "processed" }])).result.value
    .blockhash as string;
  const seeds = Array.from({ length: 16 }, (_, i) => transfer(payer, keypair().key, blockhash, i % 2 === 0, i % 4 < 2));
  for (const seed of seeds) expect(() => decodeTransaction(seed)).not.toThrow();

  let id = 0;
  let sentTx = 0;
  let executedPath = 0;
  const sendBatch = async (batch: { jsonrpc: string; id: number; method: string; params: unknown[] }[]) => {
    const { status, json } = await net.post(batch);
    expect(status).toBe(200);
    expect(json).toHaveLength(batch.length);
    checkResponses(batch, json);
    executedPath += json.filter((r: any) => r.result !== undefined || r.error?.code === -32002).length;
  };
  // Two batches in flight: the next one is generated (and signed) while the localnet works.
  let inFlight: Promise<void> = Promise.resolve();
  while (sentTx < TRANSACTIONS) {
    const batch: { jsonrpc: string; id: number; method: string; params: unknown[] }[] = [];
    for (let i = 0; i < BATCH && sentTx < TRANSACTIONS; i++, sentTx++) {
      const bytes = mutate(pick(seeds), payer);
      const base58 = random() < 0.15;
      const method = random() < 0.7 ? "sendTransaction" : "simulateTransaction";
      const config: Record<string, unknown> = {
        encoding: base58 ? "base58" : "base64",
        preflightCommitment: "processed",
        commitment: "processed",
      };
      if (method === "sendTransaction" && random() < 0.3) config.skipPreflight = true;
      if (method === "simulateTransaction" && random() < 0.3) config.sigVerify = true;
      batch.push({
        jsonrpc: "2.0",
        id: ++id,
        method,
        params: [base58 ? bs58.encode(bytes) : Buffer.from(bytes).toString("base64"), config],
      });
    }
    await inFlight;
    inFlight = sendBatch(batch);
  }
  await inFlight;

  let calls = 0;
  while (calls < MALFORMED_CALLS) {
    const batch = Array.from({ length: Math.min(BATCH, MALFORMED_CALLS - calls) }, () => malformedCall(++id));
    calls += batch.length;
    const { status, json } = await net.post(batch);
    expect(status).toBe(200);
    checkResponses(batch as { id?: unknown }[], json);
  }

  // Every garbage body gets a JSON-RPC answer in JSON: a parse error or an invalid request, or (for the
  // one well-formed request among them, a getSlot with a 400-digit id) a result under that same id.
  const bigId = "9".repeat(400);
  for (let i = 0; i < GARBAGE_BODIES; i++) {
    const body = pick([
      () => Buffer.from(new Uint8Array(randomInt(random, 200)).map(() => randomInt(random, 256))).toString("latin1"),
      () => '{"jsonrpc":"2.0","id":1,"method":"getSlot"'.slice(0, randomInt(random, 40)),
      () => "[".repeat(5000) + "]".repeat(randomInt(random, 5000)),
      () => `{"jsonrpc":"2.0","id":${bigId},"method":"getSlot"}`,
      () => "",
    ])();
    const { status, json, text } = await net.post(body, { raw: true });
    expect(status).toBe(200);
    expect(json, `not a JSON answer to ${stringifyJson(body.slice(0, 60))}: ${text.slice(0, 200)}`).toBeTypeOf(
      "object",
    );
    expect(json).not.toBeNull();
    const answer = Array.isArray(json) ? json[0] : json;
    expect(answer?.jsonrpc).toBe("2.0");
    if (body.includes(bigId)) {
      expect(text).toContain(`"id":${bigId}`);
      expect(typeof answer.result).toBe("number");
    } else {
      expect([-32700, -32600], text.slice(0, 200)).toContain(answer?.error?.code);
    }
  }

  // Still a chain: healthy, producing blocks, executing transfers.
  expect((await net.call("getHealth")).result).toBe("ok");
  const slot = (await net.call("getSlot", [{ commitment: "processed" }])).result;
  await waitFor("blocks", async () => (await net.call("getSlot", [{ commitment: "processed" }])).result > slot);
  const fresh = (await net.call("getLatestBlockhash", [{ commitment: "processed" }])).result.value.blockhash;
  const final = transfer(payer, keypair().key, fresh, true, false, 5_000_000n);
  const sent = await net.call("sendTransaction", [
    Buffer.from(final).toString("base64"),
    { encoding: "base64", preflightCommitment: "processed" },
  ]);
  expect(sent.error).toBeUndefined();
  await waitFor(
    "final transfer",
    async () => (await net.call("getSignatureStatuses", [[sent.result]])).result.value[0],
  );
  const exited = await Promise.race([
    net.handle.exited.then(() => true),
    new Promise((r) => setTimeout(() => r(false), 50)),
  ]);
  expect(exited).toBe(false);
  expect(executedPath).toBeGreaterThan(1000); // some mutants got past decoding into LiteSVM
  const elapsed = performance.now() - started;
  console.log(
    `fuzz: ${TRANSACTIONS} transactions, ${MALFORMED_CALLS} calls, ${GARBAGE_BODIES} bodies in ${(elapsed / 1000).toFixed(1)} s`,
  );
}, 150_000);
