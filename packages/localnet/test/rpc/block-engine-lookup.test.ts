/**
 * The block engine refuses a bundle that reaches a tip account through an address lookup table (Jito
 * does: the tip must be a static key). The table is loaded at start as an account file.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import bs58 from "bs58";
import {
  address,
  appendTransactionMessageInstructions,
  compressTransactionMessageUsingAddressLookupTables,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Address,
} from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import { JitoJsonRpcClient } from "jito-js-rpc";
import { fundedSigner, startTestLocalnet, type TestLocalnet } from "../helpers.ts";
import { TIP_ACCOUNTS } from "../../src/chain/bundles.ts";

const TABLE = "7Ldhs5bFpcUAXHp5SV8QcS1hFqBn6eH8QtTTrHzqp4Rq";

/** An active lookup table (agave's 56-byte meta, then the addresses) holding the first tip account. */
function tableFile(dir: string): string {
  const data = new Uint8Array(56 + 32);
  const view = new DataView(data.buffer);
  view.setUint32(0, 1, true); // LookupTable
  view.setBigUint64(4, 0xffff_ffff_ffff_ffffn, true); // never deactivated
  data.set(bs58.decode(TIP_ACCOUNTS[0]!), 56);
  const file = join(dir, "table.json");
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

let net: TestLocalnet;
beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), "jito-lookup-"));
  net = await startTestLocalnet({ accounts: [{ file: tableFile(dir) }] });
});
afterAll(async () => {
  await net?.stop();
});

describe("a tip through a lookup table", () => {
  it("is refused with its reason; the same tip as a static key is accepted", async () => {
    const jito = new JitoJsonRpcClient(net.handle.blockEngineUrl);
    const payer = await fundedSigner(net);
    const bh = (await net.rpc.getLatestBlockhash({ commitment: "processed" }).send()).value;
    const build = async (useTable: boolean) => {
      const message = pipe(
        createTransactionMessage({ version: 0 }),
        (m) => setTransactionMessageFeePayerSigner(payer, m),
        (m) => setTransactionMessageLifetimeUsingBlockhash(bh, m),
        (m) =>
          appendTransactionMessageInstructions(
            [getTransferSolInstruction({ source: payer, destination: address(TIP_ACCOUNTS[0]!), amount: 5_000n })],
            m,
          ),
      );
      const compressed = useTable
        ? compressTransactionMessageUsingAddressLookupTables(message, {
            [TABLE as Address]: [address(TIP_ACCOUNTS[0]!)],
          })
        : message;
      return getBase64EncodedWireTransaction(await signTransactionMessageWithSigners(compressed));
    };
    const viaTable = await jito.sendBundle([[await build(true)], { encoding: "base64" }]);
    expect((viaTable as any).error?.message).toMatch(/tip account through an address lookup table/);
    const direct = await jito.sendBundle([[await build(false)], { encoding: "base64" }]);
    expect(direct.result).toMatch(/^[0-9a-f]{64}$/);
  });
});
