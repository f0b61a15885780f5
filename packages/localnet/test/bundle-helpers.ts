/**
 * Bundles with a failing member injected at random, and the check that none of them landed partly:
 * shared by the block-engine test (a few dozen) and the atomicity bench (1,000).
 */
import { address, generateKeyPairSigner, type Address, type KeyPairSigner } from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import type { JitoJsonRpcClient } from "jito-js-rpc";
import { createRandom } from "../src/world/seeded-random.ts";
import { signedTransaction, waitFor, type TestLocalnet } from "./helpers.ts";

/** One sent bundle: its id, members' signatures, and which member (if any) was made to fail. */
export interface SentBundle {
  id: string;
  signatures: string[];
  failing: number | null;
  /** Each member's recipient (fresh addresses: they hold lamports only if that member's transfer landed). */
  recipients: string[];
}

/** What became of the bundles: landed whole, none of it, or partly (must be 0). */
export interface AtomicityTally {
  whole: number;
  none: number;
  partial: number;
  /** Whole bundles whose members were not consecutive, in order, in one block (must be 0). */
  outOfOrder: number;
  /** Bundles with a failing member that landed anyway (must be 0). */
  failedButLanded: number;
  /** Bundles that did not land but left lamports with a recipient: state of a rolled-back member (must be 0). */
  leaked: number;
}

/**
 * Sends `count` bundles of 2-5 transfers from `payer` (the first tips); about half get one member that
 * fails: a transfer from an unfunded signer (not committed) or one above the payer's balance (an
 * instruction error, which a plain send would commit with its fee).
 */
export async function sendRandomBundles(
  net: TestLocalnet,
  jito: JitoJsonRpcClient,
  payer: KeyPairSigner,
  tipAccount: string,
  count: number,
  seed: string,
): Promise<SentBundle[]> {
  const random = createRandom(seed);
  const broke = await generateKeyPairSigner();
  const sent: SentBundle[] = [];
  let bh = (await net.rpc.getLatestBlockhash({ commitment: "processed" }).send()).value;
  for (let i = 0; i < count; i++) {
    if (i % 100 === 99) bh = (await net.rpc.getLatestBlockhash({ commitment: "processed" }).send()).value;
    const size = 2 + random.int(4);
    const failing = random.int(2) === 0 ? random.int(size) : null;
    const members: { base64: string; signature: string }[] = [];
    const recipients: string[] = [];
    for (let m = 0; m < size; m++) {
      const to: Address = (await generateKeyPairSigner()).address;
      recipients.push(to);
      const instructions = [];
      if (m === failing && m > 0 && random.int(2) === 0) {
        instructions.push(getTransferSolInstruction({ source: broke, destination: to, amount: 1_000_000n }));
        members.push(await signedTransaction(broke, instructions, bh));
        continue;
      }
      // A unique amount keeps every transaction distinct; the failing kind asks for far more than exists.
      const amount = m === failing ? 10n ** 18n : 1_000_000n + BigInt(i * 8 + m);
      instructions.push(getTransferSolInstruction({ source: payer, destination: to, amount }));
      if (m === 0) {
        instructions.push(
          getTransferSolInstruction({ source: payer, destination: address(tipAccount), amount: 1_000n + BigInt(i) }),
        );
      }
      members.push(await signedTransaction(payer, instructions, bh));
    }
    const response = await jito.sendBundle([members.map((m) => m.base64), { encoding: "base64" }]);
    if (typeof response.result !== "string") throw new Error(`sendBundle refused: ${JSON.stringify(response)}`);
    sent.push({ id: response.result, signatures: members.map((m) => m.signature), failing, recipients });
  }
  return sent;
}

/** Waits until every bundle is Landed or Failed, then checks each against the chain's own records. */
export async function tallyBundles(
  net: TestLocalnet,
  jito: JitoJsonRpcClient,
  sent: readonly SentBundle[],
  timeoutMs = 60_000,
): Promise<AtomicityTally> {
  const states = new Map<string, { status: string; landed_slot: number | null }>();
  await waitFor(
    "every bundle settled",
    async () => {
      const open = sent.filter((b) => !["Landed", "Failed"].includes(states.get(b.id)?.status ?? ""));
      for (let i = 0; i < open.length; i += 5) {
        const response = await jito.getInFlightBundleStatuses([open.slice(i, i + 5).map((b) => b.id)]);
        for (const entry of (response.result as any).value) states.set(entry.bundle_id, entry);
      }
      return open.length === 0 || sent.every((b) => ["Landed", "Failed"].includes(states.get(b.id)?.status ?? ""));
    },
    timeoutMs,
  );
  const tally: AtomicityTally = { whole: 0, none: 0, partial: 0, outOfOrder: 0, failedButLanded: 0, leaked: 0 };
  const blocks = new Map<number, string[]>();
  for (const bundle of sent) {
    const found: ({ slot: number } | null)[] = (await net.call("getSignatureStatuses", [bundle.signatures])).result
      .value;
    const landed = found.filter((s) => s !== null).length;
    if (landed === 0) {
      tally.none++;
      const accounts = (
        await net.call("getMultipleAccounts", [bundle.recipients, { commitment: "processed", encoding: "base64" }])
      ).result.value as unknown[];
      if (accounts.some((account) => account !== null)) tally.leaked++;
    } else if (landed < found.length) tally.partial++;
    else {
      tally.whole++;
      if (bundle.failing !== null) tally.failedButLanded++;
      const slot = found[0]!.slot;
      if (!blocks.has(slot)) {
        const block = await waitFor(`block ${slot}`, async () => {
          const r = await net.call("getBlock", [slot, { commitment: "confirmed", transactionDetails: "signatures" }]);
          return r.result as { signatures: string[] } | null;
        });
        blocks.set(slot, block.signatures);
      }
      const signatures = blocks.get(slot)!;
      const at = signatures.indexOf(bundle.signatures[0]!);
      if (at < 0 || bundle.signatures.some((s, k) => signatures[at + k] !== s)) tally.outOfOrder++;
    }
  }
  return tally;
}
