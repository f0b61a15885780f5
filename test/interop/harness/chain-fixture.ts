/**
 * Puts known state on the localnet with real transactions over its JSON-RPC (the gateway is not
 * involved, so the clients' answers are checked against what was written, not against the gateway's
 * own view): a funded payer, a mint whose supply is u64::MAX split over three token accounts (one of
 * 18,446,744,073,709,551,000 base units, beyond 2^53, and one frozen), and unsigned drafts the clients
 * prepare, sign and send. The result is the environment every client reads (go/fixture.go lists it).
 */
import { randomBytes } from "node:crypto";
import bs58 from "bs58";
import {
  address,
  appendTransactionMessageInstructions,
  compileTransaction,
  createKeyPairSignerFromPrivateKeyBytes,
  createSolanaRpc,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  getTransactionDecoder,
  getTransactionEncoder,
  lamports,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransaction,
  signTransactionMessageWithSigners,
} from "@solana/kit";
import type { Instruction, KeyPairSigner, Signature } from "@solana/kit";
import {
  getCreateAccountInstruction,
  getInitializeNonceAccountInstruction,
  getNonceSize,
  getTransferSolInstruction,
  SYSTEM_PROGRAM_ADDRESS,
} from "@solana-program/system";
import {
  getFreezeAccountInstruction,
  getInitializeAccount3Instruction,
  getInitializeMint2Instruction,
  getMintToInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from "@solana-program/token";

/** One token account written, as the clients must see it (u64 values as decimal strings). */
export interface TokenAccountFixture {
  address: string;
  lamports: string;
  space: string;
  mint: string;
  owner: string;
  raw: string;
  decimals: number;
  state: "initialized" | "frozen";
}

/** What the fixture holds: plain data, so vitest's globalSetup can hand it to the test files. */
export interface ChainFixture {
  /** The payer's ed25519 seed, hex. */
  payerSeed: string;
  payer: string;
  mint: string;
  decimals: number;
  /** Sorted by address (the order of the 32 bytes). */
  tokenAccounts: TokenAccountFixture[];
}

const U64_MAX = (1n << 64n) - 1n;
const BIG = 18_446_744_073_709_551_000n;
const DECIMALS = 6;

/** Creates the fixture on the localnet at `rpcUrl`. */
export async function createChainFixture(rpcUrl: string): Promise<ChainFixture> {
  const rpc = createSolanaRpc(rpcUrl);
  const payerSeed = new Uint8Array(randomBytes(32));
  const payer = await createKeyPairSignerFromPrivateKeyBytes(payerSeed);

  const airdrop = await rpc.requestAirdrop(payer.address, lamports(100_000_000_000n)).send();
  await waitForConfirmation(rpc, airdrop);

  const mint = await generateKeyPairSigner();
  const holders = [await generateKeyPairSigner(), await generateKeyPairSigner(), await generateKeyPairSigner()];
  const owners = [await generateKeyPairSigner(), await generateKeyPairSigner(), await generateKeyPairSigner()];
  const amounts = [BIG, U64_MAX - BIG, 0n];
  const mintRent = await rpc.getMinimumBalanceForRentExemption(82n).send();
  const accountRent = await rpc.getMinimumBalanceForRentExemption(165n).send();

  const instructions: Instruction[] = [
    getCreateAccountInstruction({
      payer,
      newAccount: mint,
      lamports: mintRent,
      space: 82,
      programAddress: TOKEN_PROGRAM_ADDRESS,
    }),
    getInitializeMint2Instruction({
      mint: mint.address,
      decimals: DECIMALS,
      mintAuthority: payer.address,
      freezeAuthority: payer.address,
    }),
  ];
  holders.forEach((holder, i) => {
    instructions.push(
      getCreateAccountInstruction({
        payer,
        newAccount: holder,
        lamports: accountRent,
        space: 165,
        programAddress: TOKEN_PROGRAM_ADDRESS,
      }),
      getInitializeAccount3Instruction({ account: holder.address, mint: mint.address, owner: owners[i].address }),
    );
    if (amounts[i] > 0n)
      instructions.push(
        getMintToInstruction({ mint: mint.address, token: holder.address, mintAuthority: payer, amount: amounts[i] }),
      );
  });
  instructions.push(getFreezeAccountInstruction({ account: holders[2].address, mint: mint.address, owner: payer }));
  await waitForConfirmation(rpc, await sendSigned(rpc, payer, instructions));

  // Read back what the chain holds, so a failed setup is caught here and not blamed on the gateway.
  const { value } = await rpc
    .getMultipleAccounts(
      holders.map((h) => h.address),
      { encoding: "base64" },
    )
    .send();
  const tokenAccounts = holders.map((holder, i): TokenAccountFixture => {
    const account = value[i];
    if (account === null) throw new Error(`token account ${holder.address} was not created`);
    const data = Buffer.from(account.data[0], "base64");
    if (data.length !== 165 || data.readBigUInt64LE(64) !== amounts[i] || account.owner !== TOKEN_PROGRAM_ADDRESS) {
      throw new Error(`token account ${holder.address} does not hold what was written`);
    }
    return {
      address: holder.address,
      lamports: String(account.lamports),
      space: "165",
      mint: mint.address,
      owner: owners[i].address,
      raw: String(amounts[i]),
      decimals: DECIMALS,
      state: data[108] === 2 ? "frozen" : "initialized",
    };
  });
  tokenAccounts.sort((a, b) =>
    Buffer.compare(Buffer.from(bs58.decode(a.address)), Buffer.from(bs58.decode(b.address))),
  );

  return {
    payerSeed: Buffer.from(payerSeed).toString("hex"),
    payer: payer.address,
    mint: mint.address,
    decimals: DECIMALS,
    tokenAccounts,
  };
}

/** A transfer from the payer to a new account, distinct per `index`. */
async function transfer(payer: KeyPairSigner, index: number): Promise<Instruction> {
  const recipient = await generateKeyPairSigner();
  // Above the rent-exempt minimum, so the new account may exist.
  return getTransferSolInstruction({
    source: payer,
    destination: recipient.address,
    amount: lamports(1_000_000n + BigInt(index)),
  });
}

/** An unsigned transfer from the payer (zeros in its signature slot), for a client to prepare, sign and send. */
export async function buildDraft(rpcUrl: string, payerSeedHex: string, index: number): Promise<Uint8Array> {
  const rpc = createSolanaRpc(rpcUrl);
  const payer = await createKeyPairSignerFromPrivateKeyBytes(Buffer.from(payerSeedHex, "hex"));
  const instruction = await transfer(payer, index);
  const { value: latest } = await rpc.getLatestBlockhash().send();
  const message = pipe(
    createTransactionMessage({ version: "legacy" }),
    (m) => setTransactionMessageFeePayer(payer.address, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(latest, m),
    (m) => appendTransactionMessageInstructions([instruction], m),
  );
  return new Uint8Array(getTransactionEncoder().encode(compileTransaction(message)));
}

/**
 * An unsigned bundle member for a client to sign and send with SendBundle: a transfer from the payer
 * plus a 10,000-lamport tip to the localnet block engine's first tip account (getTipAccounts).
 */
export async function buildBundleDraft(rpcUrl: string, payerSeedHex: string, index: number): Promise<Uint8Array> {
  const rpc = createSolanaRpc(rpcUrl);
  const payer = await createKeyPairSignerFromPrivateKeyBytes(Buffer.from(payerSeedHex, "hex"));
  const answer = await fetch(`${rpcUrl}/api/v1/bundles`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "getTipAccounts", params: [] }),
  });
  const tip = address(((await answer.json()) as { result: string[] }).result[0] as string);
  const instructions = [
    await transfer(payer, 1000 + index),
    getTransferSolInstruction({ source: payer, destination: tip, amount: lamports(10_000n) }),
  ];
  const { value: latest } = await rpc.getLatestBlockhash().send();
  const message = pipe(
    createTransactionMessage({ version: "legacy" }),
    (m) => setTransactionMessageFeePayer(payer.address, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(latest, m),
    (m) => appendTransactionMessageInstructions(instructions, m),
  );
  return new Uint8Array(getTransactionEncoder().encode(compileTransaction(message)));
}

/**
 * Signs a transfer and sends it to the localnet directly (not through the gateway); returns its
 * signature once the chain has executed it (a gateway cannot know of a transaction before that).
 */
export async function sendTransfer(rpcUrl: string, payerSeedHex: string, index: number): Promise<string> {
  const rpc = createSolanaRpc(rpcUrl);
  const payer = await createKeyPairSignerFromPrivateKeyBytes(Buffer.from(payerSeedHex, "hex"));
  const signature = await sendSigned(rpc, payer, [await transfer(payer, index)]);
  await waitForStatus(rpc, signature, ["processed", "confirmed", "finalized"]);
  return signature;
}

type SolanaRpc = ReturnType<typeof createSolanaRpc>;

/** Signs `instructions` with the payer (and any signers they carry) and sends them. */
async function sendSigned(rpc: SolanaRpc, payer: KeyPairSigner, instructions: Instruction[]): Promise<Signature> {
  const { value: latest } = await rpc.getLatestBlockhash().send();
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(payer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(latest, m),
    (m) => appendTransactionMessageInstructions(instructions, m),
  );
  const signed = await signTransactionMessageWithSigners(message);
  return rpc.sendTransaction(getBase64EncodedWireTransaction(signed), { encoding: "base64" }).send();
}

/** Polls until `signature` is confirmed; throws if it failed or takes longer than `timeoutMs`. */
function waitForConfirmation(rpc: SolanaRpc, signature: Signature): Promise<void> {
  return waitForStatus(rpc, signature, ["confirmed", "finalized"]);
}

/** Polls until `signature` reaches one of `statuses`; throws if it failed or after `timeoutMs`. */
async function waitForStatus(
  rpc: SolanaRpc,
  signature: Signature,
  statuses: readonly string[],
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const { value } = await rpc.getSignatureStatuses([signature]).send();
    const status = value[0];
    if (status?.err)
      throw new Error(
        `fixture transaction ${signature} failed: ${JSON.stringify(status.err, (_k, v) => (typeof v === "bigint" ? String(v) : v))}`,
      );
    if (status?.confirmationStatus != null && statuses.includes(status.confirmationStatus)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`fixture transaction ${signature} did not reach ${statuses.join("/")} within ${timeoutMs} ms`);
}

/** A durable nonce account whose authority is the payer, created on the localnet directly; returns its address. */
export async function createNonceAccount(rpcUrl: string, payerSeedHex: string): Promise<string> {
  const rpc = createSolanaRpc(rpcUrl);
  const payer = await createKeyPairSignerFromPrivateKeyBytes(Buffer.from(payerSeedHex, "hex"));
  const nonce = await generateKeyPairSigner();
  const space = BigInt(getNonceSize());
  const rent = await rpc.getMinimumBalanceForRentExemption(space).send();
  const signature = await sendSigned(rpc, payer, [
    getCreateAccountInstruction({
      payer,
      newAccount: nonce,
      lamports: rent,
      space,
      programAddress: SYSTEM_PROGRAM_ADDRESS,
    }),
    getInitializeNonceAccountInstruction({ nonceAccount: nonce.address, nonceAuthority: payer.address }),
  ]);
  await waitForConfirmation(rpc, signature);
  return nonce.address;
}

/** Signs a wire transaction (a ladder's rung) with the payer, whose slot it has. */
export async function signWithPayer(wire: Uint8Array, payerSeedHex: string): Promise<Uint8Array> {
  const payer = await createKeyPairSignerFromPrivateKeyBytes(Buffer.from(payerSeedHex, "hex"));
  const signed = await signTransaction([payer.keyPair], getTransactionDecoder().decode(wire));
  return new Uint8Array(getTransactionEncoder().encode(signed));
}
