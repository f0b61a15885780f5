/** Transfers and landing waits shared by the PubSub tests. */
import type { Address, KeyPairSigner } from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import { signedTransaction, waitFor, type TestLocalnet } from "../helpers.ts";

/** Sends a transfer (preflight at processed); resolves to its signature. */
export async function transfer(
  net: TestLocalnet,
  payer: KeyPairSigner,
  to: string,
  lamports: bigint,
  version: 0 | "legacy" = 0,
  skipPreflight = false,
): Promise<string> {
  const { value: bh } = await net.rpc.getLatestBlockhash({ commitment: "processed" }).send();
  const tx = await signedTransaction(
    payer,
    [getTransferSolInstruction({ source: payer, destination: to as Address, amount: lamports })],
    bh,
    version,
  );
  const response = await net.call("sendTransaction", [
    tx.base64,
    { encoding: "base64", preflightCommitment: "processed", skipPreflight },
  ]);
  if (response.result !== tx.signature) throw new Error(`sendTransaction: ${JSON.stringify(response.error)}`);
  return tx.signature;
}

/** The slot a signature landed in (waits for it). */
export async function landedSlot(net: TestLocalnet, signature: string): Promise<number> {
  return waitFor("landed", async () => {
    const status = (await net.call("getSignatureStatuses", [[signature]])).result.value[0];
    return status ? Number(status.slot) : null;
  });
}
