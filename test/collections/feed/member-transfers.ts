/**
 * Real collection traffic on the localnet world: the demo wallet holds verified members of the generated
 * collection (account-based NFTs; its keypair file is in the manifest), so a real SPL Token transfer of one,
 * signed and landed, is a real MEMBER_TRANSFERRED in a real block (the token balances show the single token
 * changing owner). A courier moves one member back and forth between the demo wallet and a funded key pair.
 */
import { readFileSync } from "node:fs";
import {
  appendTransactionMessageInstructions,
  createKeyPairSignerFromBytes,
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
import type { Address, KeyPairSigner, Signature } from "@solana/kit";
import {
  TOKEN_PROGRAM_ADDRESS,
  findAssociatedTokenPda,
  getCreateAssociatedTokenIdempotentInstruction,
  getTransferCheckedInstruction,
} from "@solana-program/token";
import type { WorldManifest } from "@solgate/localnet";

/** One move of the member. */
export interface Move {
  readonly signature: string;
  readonly from: string;
  readonly to: string;
}

/** Moves one member between two owners. */
export interface MemberCourier {
  /** The member's mint (its asset id). */
  readonly mint: string;
  /** Moves it to the other owner; resolves once the transfer is confirmed. */
  move(): Promise<Move>;
}

/** A courier for the demo wallet's `index`th member NFT, over the localnet at `rpcUrl`. */
export async function createMemberCourier(rpcUrl: string, manifest: WorldManifest, index = 0): Promise<MemberCourier> {
  const rpc = createSolanaRpc(rpcUrl);
  const keypairFile = manifest.demoWallet.keypairFile;
  if (keypairFile === undefined) throw new Error("the world manifest names no demo keypair file");
  const demo = await createKeyPairSignerFromBytes(
    Uint8Array.from(JSON.parse(readFileSync(keypairFile, "utf8")) as number[]),
  );
  const mint = manifest.demoWallet.nfts[index] as Address;
  const other = await generateKeyPairSigner();
  const airdrop = await rpc.requestAirdrop(other.address, 2_000_000_000n as never).send();
  await confirmed(airdrop);
  const { value } = await rpc.getTokenAccountsByOwner(demo.address, { mint }, { encoding: "base64" }).send();
  if (value[0] === undefined) throw new Error(`the demo wallet holds no token account of ${mint}`);
  const accounts = new Map<string, Address>([[demo.address, value[0].pubkey]]);
  const [otherAta] = await findAssociatedTokenPda({ owner: other.address, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  accounts.set(other.address, otherAta);
  let holder: KeyPairSigner = demo;

  async function confirmed(signature: Signature): Promise<void> {
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      const { value: statuses } = await rpc.getSignatureStatuses([signature]).send();
      const status = statuses[0];
      if (status?.err) throw new Error(`${signature} failed: ${JSON.stringify(status.err)}`);
      if (status?.confirmationStatus === "confirmed" || status?.confirmationStatus === "finalized") return;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`${signature} was not confirmed in time`);
  }

  return {
    mint,
    async move() {
      const to = holder === demo ? other : demo;
      const { value: blockhash } = await rpc.getLatestBlockhash({ commitment: "confirmed" }).send();
      const message = pipe(
        createTransactionMessage({ version: 0 }),
        (m) => setTransactionMessageFeePayerSigner(holder, m),
        (m) => setTransactionMessageLifetimeUsingBlockhash(blockhash, m),
        (m) =>
          appendTransactionMessageInstructions(
            [
              getCreateAssociatedTokenIdempotentInstruction({
                payer: holder,
                ata: otherAta,
                owner: other.address,
                mint,
              }),
              getTransferCheckedInstruction({
                source: accounts.get(holder.address)!,
                mint,
                destination: accounts.get(to.address)!,
                authority: holder,
                amount: 1n,
                decimals: 0,
              }),
            ],
            m,
          ),
      );
      const signed = await signTransactionMessageWithSigners(message);
      const signature = getSignatureFromTransaction(signed);
      await rpc.sendTransaction(getBase64EncodedWireTransaction(signed), { encoding: "base64" }).send();
      await confirmed(signature);
      const move = { signature, from: holder.address, to: to.address };
      holder = to;
      return move;
    },
  };
}
