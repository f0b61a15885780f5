/**
 * Durable nonces and ladders on the real localnet: a nonce account created and initialized with
 * @solana-program/system, the client's own AdvanceNonceAccount, and rungs built by hand (for the refusals and the
 * failures PrepareLadder would never hand out).
 */
import bs58 from "bs58";
import {
  appendTransactionMessageInstructions,
  compileTransaction,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  getTransactionDecoder,
  getTransactionEncoder,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  setTransactionMessageLifetimeUsingDurableNonce,
  signTransaction,
  signTransactionMessageWithSigners,
} from "@solana/kit";
import type { Address, Instruction, KeyPairSigner, Nonce, Signature } from "@solana/kit";
import {
  getAdvanceNonceAccountInstruction,
  getCreateAccountInstruction,
  getInitializeNonceAccountInstruction,
  getNonceSize,
  getTransferSolInstruction,
  fetchNonce,
  SYSTEM_PROGRAM_ADDRESS,
} from "@solana-program/system";
import { getSetComputeUnitLimitInstruction, getSetComputeUnitPriceInstruction } from "@solana-program/compute-budget";
import type { ChainFixture } from "../chain-fixture.ts";
import type { OddsAt } from "../../../src/fees/fee-odds.ts";
import { createLadders } from "../../../src/transactions/ladder/ladders.ts";
import type { Ladders } from "../../../src/transactions/ladder/ladders.ts";

const wireOf = (signed: Parameters<typeof getBase64EncodedWireTransaction>[0]) =>
  new Uint8Array(Buffer.from(getBase64EncodedWireTransaction(signed), "base64"));

/** The first signature of a wire transaction. */
export const signatureOf = (wire: Uint8Array) => bs58.encode(wire.subarray(1, 65));

async function sendAndConfirm(chain: ChainFixture, wire: Uint8Array): Promise<string> {
  const signature = await chain.upstream.rpc
    .sendTransaction(Buffer.from(wire).toString("base64") as never, { encoding: "base64" })
    .send();
  await chain.waitConfirmed(signature);
  return signature;
}

/** Creates and initializes a nonce account whose authority is `authority` (the payer pays). */
export async function createNonceAccount(
  chain: ChainFixture,
  payer: KeyPairSigner,
  authority: Address = payer.address,
): Promise<Address> {
  const nonce = await generateKeyPairSigner();
  const space = BigInt(getNonceSize());
  const lamports = await chain.upstream.rpc.getMinimumBalanceForRentExemption(space).send();
  const blockhash = await chain.latestBlockhash();
  const built = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(payer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(blockhash, m),
    (m) =>
      appendTransactionMessageInstructions(
        [
          getCreateAccountInstruction({
            payer,
            newAccount: nonce,
            lamports,
            space,
            programAddress: SYSTEM_PROGRAM_ADDRESS,
          }),
          getInitializeNonceAccountInstruction({ nonceAccount: nonce.address, nonceAuthority: authority }),
        ],
        m,
      ),
  );
  await sendAndConfirm(chain, wireOf(await signTransactionMessageWithSigners(built)));
  return nonce.address;
}

/** The nonce account's stored value (at processed: the newest bank). */
export async function nonceValue(chain: ChainFixture, account: Address): Promise<string> {
  const nonce = await fetchNonce(chain.upstream.rpc, account, { commitment: "processed" });
  return String(nonce.data.blockhash);
}

/** A signed AdvanceNonceAccount by the authority, with a high compute-unit price (so it goes first in its block). */
export async function advanceNonceWire(
  chain: ChainFixture,
  authority: KeyPairSigner,
  account: Address,
  microLamports = 100_000_000n,
): Promise<Uint8Array> {
  const blockhash = await chain.latestBlockhash();
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(authority, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(blockhash, m),
    (m) =>
      appendTransactionMessageInstructions(
        [
          getSetComputeUnitPriceInstruction({ microLamports }),
          getAdvanceNonceAccountInstruction({ nonceAccount: account, nonceAuthority: authority }),
        ],
        m,
      ),
  );
  return wireOf(await signTransactionMessageWithSigners(message));
}

/** Sends the client's own AdvanceNonceAccount (not waiting for it). */
export async function sendRaw(chain: ChainFixture, wire: Uint8Array): Promise<string> {
  return chain.upstream.rpc
    .sendTransaction(Buffer.from(wire).toString("base64") as never, { encoding: "base64", skipPreflight: true })
    .send();
}

/** An unsigned draft: a transfer from the payer (which is also the nonce authority, so a signer). */
export async function draftTransfer(payer: KeyPairSigner, lamports = 1_000_000n): Promise<Uint8Array> {
  const to = (await generateKeyPairSigner()).address;
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(payer, m),
    (m) =>
      setTransactionMessageLifetimeUsingBlockhash(
        { blockhash: "11111111111111111111111111111111" as never, lastValidBlockHeight: 0n },
        m,
      ),
    (m) =>
      appendTransactionMessageInstructions(
        [getTransferSolInstruction({ source: payer, destination: to, amount: lamports })],
        m,
      ),
  );
  // Compiled with empty signatures: an unsigned draft as a client would hand it over.
  return new Uint8Array(getTransactionEncoder().encode(compileTransaction(message)));
}

/** Signs an unsigned rung with the given signers. */
export async function signRung(wire: Uint8Array, signers: KeyPairSigner[]): Promise<Uint8Array> {
  const tx = getTransactionDecoder().decode(wire);
  const signed = await signTransaction(
    signers.map((s) => s.keyPair),
    tx,
  );
  return new Uint8Array(getTransactionEncoder().encode(signed));
}

/** Rungs built by hand on a nonce: the same instructions at each price, signed by the payer (also the authority). */
export async function handRungs(
  payer: KeyPairSigner,
  account: Address,
  nonce: string,
  prices: bigint[],
  instructions: Instruction[],
): Promise<Uint8Array[]> {
  const out: Uint8Array[] = [];
  for (const microLamports of prices) {
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(payer, m),
      (m) =>
        setTransactionMessageLifetimeUsingDurableNonce(
          { nonce: nonce as Nonce, nonceAccountAddress: account, nonceAuthorityAddress: payer.address },
          m,
        ),
      (m) =>
        appendTransactionMessageInstructions(
          [
            getSetComputeUnitLimitInstruction({ units: 10_000 }),
            getSetComputeUnitPriceInstruction({ microLamports }),
            ...instructions,
          ],
          m,
        ),
    );
    out.push(wireOf(await signTransactionMessageWithSigners(message)));
  }
  return out;
}

/**
 * Started ladders on the chain whose sender submits nothing and records each rung it is handed (its first
 * signature, hex), and whose odds are `oddsWithin(k)`: the climb alone, against a model the test chooses.
 */
export function recordingLadders(
  chain: ChainFixture,
  oddsWithin: (k: number) => OddsAt,
): { ladders: Ladders; submitted: string[] } {
  const submitted: string[] = [];
  const ladders = createLadders({
    rpc: chain.upstream.rpc,
    sender: {
      async send(request) {
        submitted.push(Buffer.from(request.wire.subarray(1, 65)).toString("hex"));
        return {} as never;
      },
      async forget() {},
    },
    fees: { oddsForTransaction: async (_wire, k) => oddsWithin(k ?? 1), forAccounts: () => ({}) },
    target: 0.9,
    pollIntervalMs: 25,
    graceSlots: 4,
  });
  ladders.start();
  return { ladders, submitted };
}

/**
 * A ladder of hand-built rungs at `prices` on a fresh nonce account: a newly funded payer (also the nonce's
 * authority) sends 1,000 lamports to a newly funded account.
 */
export async function transferRungsOnFreshNonce(chain: ChainFixture, prices: bigint[]): Promise<Uint8Array[]> {
  const payer = await chain.funded(10);
  const nonce = await createNonceAccount(chain, payer);
  const value = await nonceValue(chain, nonce);
  const to = (await chain.funded(1)).address;
  return handRungs(payer, nonce, value, prices, [
    getTransferSolInstruction({ source: payer, destination: to, amount: 1_000n }),
  ]);
}

/** How many of the signatures are on chain (any commitment, searching history): a ladder must never have two. */
export async function onChain(chain: ChainFixture, signatures: readonly string[]): Promise<number> {
  const { value } = await chain.upstream.rpc
    .getSignatureStatuses(signatures as Signature[], { searchTransactionHistory: true })
    .send();
  return value.filter((status) => status !== null).length;
}

/** Polls until `check` holds. */
export async function waitFor<T>(read: () => Promise<T>, check: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() > deadline)
      throw new Error(
        `condition not met within ${timeoutMs} ms; last: ${JSON.stringify(value, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v instanceof Uint8Array ? `<${v.length} bytes>` : v))}`,
      );
    await new Promise((r) => setTimeout(r, 50));
  }
}
