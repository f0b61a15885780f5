/**
 * `base64+zstd` byte for byte as agave writes it: frames compared with those agave 4.4.0's own
 * `encode_ui_account` made of the same bytes (test/decoder-oracle, `zstd` in expected.json), through
 * every path that encodes an account: getAccountInfo (with and without a data slice),
 * getMultipleAccounts, getProgramAccounts, accountSubscribe and simulateTransaction's accounts. Every
 * non-empty frame has agave's header: no content size (0x00) and window log 21 (0x58), whatever the
 * size; empty data is a single-segment frame of declared size 0 (0x20), as zstd's encoder given no write.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { generateKeyPairSigner, type Address } from "@solana/kit";
import { getCreateAccountInstruction } from "@solana-program/system";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compressLikeAgave, settleZstdFrames, zstdFrame } from "../../src/accounts/zstd-frame.ts";
import { stringifyJson } from "../../src/rpc/json.ts";
import { ZSTD_INPUTS, zstdInputData, type ZstdInput } from "../decoder-oracle/zstd-inputs.ts";
import { fundedSigner, signedTransaction, startTestLocalnet, waitFor, type TestLocalnet } from "../helpers.ts";
import { connect } from "../pubsub/ws-client.ts";

interface Expected extends ZstdInput {
  frame?: string;
  frameSha256?: string;
}
const ORACLE = JSON.parse(readFileSync(new URL("../decoder-oracle/expected.json", import.meta.url), "utf8")) as {
  zstd: Expected[];
};
const expected = new Map(ORACLE.zstd.map((e) => [e.name, e]));

/** Checks a frame against agave's for `name`: the header, then the bytes (or their digest). */
function expectAgaveFrame(text: string, name: string): void {
  const want = expected.get(name);
  if (want === undefined) throw new Error(`no oracle frame for ${name}`);
  const bytes = Buffer.from(text, "base64");
  expect(bytes.subarray(0, 6).toString("hex"), name).toBe(
    want.size === 0 || (want.slice && want.slice.offset >= want.size) ? "28b52ffd2000" : "28b52ffd0058",
  );
  if (want.frame !== undefined) expect(text, name).toBe(want.frame);
  else expect(createHash("sha256").update(text).digest("hex"), name).toBe(want.frameSha256);
}

const OWNER = (await generateKeyPairSigner()).address;
const loaded = ZSTD_INPUTS.filter((input) => input.slice === undefined);

describe("base64+zstd frames", () => {
  let net: TestLocalnet;
  const addresses = new Map<string, Address>();

  beforeAll(async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "localnet-zstd-"));
    const accounts = [];
    for (const input of loaded) {
      const address = (await generateKeyPairSigner()).address;
      addresses.set(input.name, address);
      const data = Buffer.from(zstdInputData(input)).toString("base64");
      const file = path.join(dir, `${address}.json`);
      writeFileSync(
        file,
        stringifyJson({
          pubkey: address,
          account: {
            lamports: 1_000_000_000_000,
            data: [data, "base64"],
            owner: OWNER,
            executable: false,
            rentEpoch: 0,
          },
        }),
      );
      accounts.push({ address, file });
    }
    net = await startTestLocalnet({ accounts });
  }, 60_000);
  afterAll(() => net?.stop());

  it("compresses as agave's streaming encoder, not as a one-shot compressor", async () => {
    for (const input of ZSTD_INPUTS) {
      const data = zstdInputData(input);
      const part = input.slice ? data.subarray(input.slice.offset, input.slice.offset + input.slice.length) : data;
      expectAgaveFrame((await compressLikeAgave(part)).toString("base64"), input.name);
    }
  });

  it("makes a caller whose frames another caller took wait for them", async () => {
    // A notification may settle the frames an answer made just before the answer settles its own.
    const frame = zstdFrame(zstdInputData(ZSTD_INPUTS[2]!));
    const first = settleZstdFrames();
    const second = settleZstdFrames();
    expect(first).not.toBeNull();
    expect(second).not.toBeNull();
    await second;
    expectAgaveFrame(frame.toJSON(), ZSTD_INPUTS[2]!.name);
    await first;
    expect(settleZstdFrames()).toBeNull();
  });

  it("getAccountInfo and getMultipleAccounts answer agave's frames", async () => {
    for (const input of loaded) {
      const { result } = await net.call("getAccountInfo", [addresses.get(input.name), { encoding: "base64+zstd" }]);
      expect(result.value.data[1]).toBe("base64+zstd");
      expectAgaveFrame(result.value.data[0], input.name);
    }
    const { result } = await net.call("getMultipleAccounts", [
      loaded.map((input) => addresses.get(input.name)),
      { encoding: "base64+zstd" },
    ]);
    loaded.forEach((input, i) => expectAgaveFrame(result.value[i].data[0], input.name));
  });

  it("slices before compressing, as agave does", async () => {
    for (const input of ZSTD_INPUTS.filter((i) => i.slice !== undefined)) {
      const whole = loaded.find((l) => l.size === input.size && !l.zeros)!;
      const { result } = await net.call("getAccountInfo", [
        addresses.get(whole.name),
        { encoding: "base64+zstd", dataSlice: input.slice },
      ]);
      expectAgaveFrame(result.value.data[0], input.name);
    }
  });

  it("getProgramAccounts answers agave's frames", async () => {
    const { result } = await net.call("getProgramAccounts", [OWNER, { encoding: "base64+zstd" }]);
    expect(result).toHaveLength(loaded.length);
    for (const input of loaded) {
      const entry = result.find((e: any) => e.pubkey === addresses.get(input.name));
      expectAgaveFrame(entry.account.data[0], input.name);
    }
  });

  it("accountSubscribe and simulateTransaction's accounts answer agave's frames", async () => {
    const payer = await fundedSigner(net);
    const created = await generateKeyPairSigner();
    const { value: bh } = await net.rpc.getLatestBlockhash({ commitment: "processed" }).send();
    const create = getCreateAccountInstruction({
      payer,
      newAccount: created,
      lamports: 10_000_000n,
      space: 200n,
      programAddress: OWNER,
    });
    const tx = await signedTransaction(payer, [create], bh);
    const simulated = await net.call("simulateTransaction", [
      tx.base64,
      {
        encoding: "base64",
        commitment: "processed",
        accounts: { addresses: [created.address], encoding: "base64+zstd" },
      },
    ]);
    expect(simulated.result.value.err).toBeNull();
    expectAgaveFrame(simulated.result.value.accounts[0].data[0], "200 zero bytes (a new account)");

    const ws = await connect(net.handle.wsUrl);
    try {
      const sub = await ws.subscribe("accountSubscribe", [
        created.address,
        { encoding: "base64+zstd", commitment: "processed" },
      ]);
      const sent = await net.call("sendTransaction", [
        tx.base64,
        { encoding: "base64", preflightCommitment: "processed" },
      ]);
      expect(sent.result).toBe(tx.signature);
      const note = await ws.next(sub, undefined, 20_000);
      expectAgaveFrame(note.params.result.value.data[0], "200 zero bytes (a new account)");
    } finally {
      ws.close();
    }
    await waitFor("landed", async () => (await net.call("getSignatureStatuses", [[tx.signature]])).result.value[0]);
  });
});
