/**
 * A block from the Geyser stream, converted (geyser-block.ts), against the same block read with getBlock and
 * scanned (block-transactions.ts): the real localnet with priced traffic, plus a v0 transaction that
 * write-locks an account through a real lookup table, one that sets its compute-unit limit and price, and a
 * failed one. The stream is the gateway's own block stream (geyser-blocks.ts) at processed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  appendTransactionMessageInstructions,
  compressTransactionMessageUsingAddressLookupTables,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
} from "@solana/kit";
import type { Base64EncodedWireTransaction, Signature } from "@solana/kit";
import { getSetComputeUnitLimitInstruction, getSetComputeUnitPriceInstruction } from "@solana-program/compute-budget";
import { getTransferSolInstruction } from "@solana-program/system";
import bs58 from "bs58";
import type { SubscribeUpdateBlock } from "../../gen/geyser/geyser_pb.js";
import { pricesOfBlock } from "../../src/fees/block-transactions.ts";
import type { BlockPrices } from "../../src/fees/block-transactions.ts";
import { streamBlockOf } from "../../src/fees/geyser-block.ts";
import { createGeyserBlocks } from "../../src/upstream/geyser-blocks.ts";
import type { GeyserBlocks } from "../../src/upstream/geyser-blocks.ts";
import { startChainFixture, transferTransaction } from "../transactions/chain-fixture.ts";
import type { ChainFixture } from "../transactions/chain-fixture.ts";
import { createLookupTable } from "./on-chain.ts";

let chain: ChainFixture;
let stream: GeyserBlocks;
const blocks = new Map<bigint, SubscribeUpdateBlock>();

beforeAll(async () => {
  chain = await startChainFixture({ slotMs: 100, traffic: true });
  stream = createGeyserBlocks({ url: chain.localnet.geyserUrl! });
  stream.onBlock((block) => blocks.set(block.slot, block));
}, 60_000);

afterAll(async () => {
  stream?.close();
  await chain?.stop();
});

/** Prices with the signature as text, so that a Buffer view and a Uint8Array compare by content. */
const comparable = (prices: BlockPrices) => ({
  ...prices,
  transactions: prices.transactions.map((t) => ({
    ...t,
    signature: t.signature === undefined ? undefined : bs58.encode(t.signature),
  })),
});

async function send(wire: string): Promise<string> {
  return chain.upstream.rpc
    .sendTransaction(wire as Base64EncodedWireTransaction, { encoding: "base64", skipPreflight: true })
    .send();
}

describe("a Geyser stream block against the same block through getBlock", () => {
  it("gives the same records: prices, limits, costs, write locks (lookup tables too), signatures", async () => {
    const payer = await chain.funded(10);
    const hot = (await generateKeyPairSigner()).address;
    const table = await createLookupTable(chain.upstream.rpc, payer, [hot]);
    const { blockhash } = await chain.latestBlockhash();

    // v0, a limit and a price, and `hot` write-locked through the table (loaded, not static).
    const viaTable = await signTransactionMessageWithSigners(
      compressTransactionMessageUsingAddressLookupTables(
        pipe(
          createTransactionMessage({ version: 0 }),
          (m) => setTransactionMessageFeePayerSigner(payer, m),
          (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash, lastValidBlockHeight: 1_000_000n }, m),
          (m) =>
            appendTransactionMessageInstructions(
              [
                getSetComputeUnitLimitInstruction({ units: 45_000 }),
                getSetComputeUnitPriceInstruction({ microLamports: 777_777n }),
                getTransferSolInstruction({ source: payer, destination: hot, amount: 5_000_000n }),
              ],
              m,
            ),
        ),
        { [table]: [hot] },
      ),
    );
    const tableSignature = await send(getBase64EncodedWireTransaction(viaTable));
    // Fails on chain (more than the payer holds) but lands, with its fee paid: blocks list it.
    const failing = await transferTransaction({
      payer,
      lamports: 1_000_000_000_000n,
      blockhash: { blockhash, lastValidBlockHeight: 1_000_000n },
      budget: { microLamports: 5n },
    });
    const failedSignature = await send(Buffer.from(failing.wire).toString("base64"));
    await chain.waitConfirmed(tableSignature);
    await chain.waitConfirmed(failedSignature).catch(() => {});
    const statuses = await chain.upstream.rpc
      .getSignatureStatuses([tableSignature as Signature, failedSignature as Signature])
      .send();
    expect(statuses.value[0]?.err).toBeNull();
    expect(statuses.value[1]?.err).not.toBeNull();
    // Let the stream bring a few more blocks of traffic.
    const newest = [...blocks.keys()].reduce((a, b) => (a > b ? a : b), 0n);
    const deadline = Date.now() + 10_000;
    while ([...blocks.keys()].filter((slot) => slot > newest).length < 5 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));

    let compared = 0;
    let withTable = 0;
    let withFailed = 0;
    for (const [slot, block] of blocks) {
      const fromRpc = await chain.upstream.rpc
        .getBlock(slot, {
          commitment: "confirmed",
          encoding: "base64",
          transactionDetails: "full",
          rewards: false,
          maxSupportedTransactionVersion: 0,
        })
        .send()
        .catch(() => null);
      if (fromRpc === null) continue; // not confirmed yet, or gone from the node's retention
      const converted = streamBlockOf(block);
      expect(converted.slot).toBe(slot);
      expect(converted.parentSlot).toBe(fromRpc.parentSlot);
      expect(comparable(converted.prices), `slot ${slot}`).toEqual(comparable(pricesOfBlock(fromRpc)));
      compared += converted.prices.transactions.length;
      const signatures = converted.prices.transactions.map((t) => bs58.encode(t.signature!));
      const mine = converted.prices.transactions[signatures.indexOf(tableSignature)];
      if (mine !== undefined) {
        withTable++;
        expect(mine.price).toBe(777_777n);
        expect(mine.unitLimit).toBe(45_000);
        expect(mine.writable).toEqual([payer.address, hot]);
      }
      if (signatures.includes(failedSignature)) withFailed++;
    }
    expect(withTable).toBe(1);
    expect(withFailed).toBe(1);
    expect(compared).toBeGreaterThan(20); // the traffic's priced transactions, not only ours
  }, 60_000);
});
