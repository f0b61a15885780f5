/**
 * Durable-nonce test helpers: nonce and lookup-table account files (loaded at start as
 * solana-test-validator's `--account`), nonce accounts created on chain, transactions on a nonce
 * value, and the checks that a transaction never landed or landed charged.
 */
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import path from "node:path";
import {
  AccountRole,
  appendTransactionMessageInstructions,
  compressTransactionMessageUsingAddressLookupTables,
  createTransactionMessage,
  generateKeyPairSigner,
  getAddressEncoder,
  getBase64EncodedWireTransaction,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Address,
  type Blockhash,
  type Instruction,
  type KeyPairSigner,
} from "@solana/kit";
import {
  getAdvanceNonceAccountInstruction,
  getCreateAccountInstruction,
  getInitializeNonceAccountInstruction,
  getNonceDecoder,
  getNonceEncoder,
  NonceState,
  NonceVersion,
} from "@solana-program/system";
import bs58 from "bs58";
import { expect } from "vitest";
import { waitFor, type TestLocalnet } from "../helpers.ts";

export const SYSTEM = "11111111111111111111111111111111";
export const RECENT_BLOCKHASHES = "SysvarRecentB1ockHashes11111111111111111111";
export const LOOKUP_TABLE_PROGRAM = "AddressLookupTab1e1111111111111111111111111";
/** Rent-exempt minimum of a nonce account (agave: (128 + 80) x 3,480 x 2). */
export const NONCE_RENT = 1_447_680n;
/** Rent-exempt minimum of a data-less account (agave: 128 x 3,480 x 2). */
export const EMPTY_RENT = 890_880n;

/** sha256("DURABLE_NONCE" || blockhash): agave's DurableNonce::from_blockhash, written independently. */
export function durableNonceOf(blockhash: string): string {
  return bs58.encode(createHash("sha256").update(Buffer.from("DURABLE_NONCE")).update(bs58.decode(blockhash)).digest());
}

/** A random 32-byte value in base58 (a nonce value no block ever had). */
export const randomHash = (): string => bs58.encode(crypto.getRandomValues(new Uint8Array(32)));

/** Nonce account data in the System program's layout. */
export function nonceData(fields: {
  authority: string;
  nonce: string;
  version?: NonceVersion;
  state?: NonceState;
  lamportsPerSignature?: bigint;
}): Uint8Array {
  return new Uint8Array(
    getNonceEncoder().encode({
      version: fields.version ?? NonceVersion.Current,
      state: fields.state ?? NonceState.Initialized,
      authority: fields.authority as Address,
      blockhash: fields.nonce as Address,
      lamportsPerSignature: fields.lamportsPerSignature ?? 5000n,
    }),
  );
}

/** An active lookup table holding `addresses` (agave's LookupTableMeta, 56 bytes, then the addresses). */
export function lookupTableData(addresses: string[]): Uint8Array {
  const data = new Uint8Array(56 + 32 * addresses.length);
  const view = new DataView(data.buffer);
  view.setUint32(0, 1, true); // ProgramState::LookupTable
  view.setBigUint64(4, 0xffffffffffffffffn, true); // never deactivated
  addresses.forEach((address, i) => data.set(getAddressEncoder().encode(address as Address), 56 + 32 * i));
  return data;
}

/** Writes one account file for `--account` and returns its path. */
export function accountFile(
  dir: string,
  address: string,
  account: { lamports: bigint; data: Uint8Array; owner: string },
): string {
  const file = path.join(dir, `${address}.json`);
  writeFileSync(
    file,
    JSON.stringify({
      pubkey: address,
      account: {
        lamports: Number(account.lamports),
        data: [Buffer.from(account.data).toString("base64"), "base64"],
        owner: account.owner,
        executable: false,
        rentEpoch: 0,
        space: account.data.length,
      },
    }),
  );
  return file;
}

/** A nonce account as the chain holds it (null when it is not a readable nonce account). */
export interface NonceView {
  lamports: bigint;
  owner: string;
  data: string;
  authority: string;
  nonce: string;
  lamportsPerSignature: bigint;
}

export async function readNonce(net: TestLocalnet, address: string): Promise<NonceView> {
  const value = (await net.call("getAccountInfo", [address, { encoding: "base64", commitment: "processed" }])).result
    .value;
  const data = Buffer.from(value.data[0], "base64");
  const decoded = getNonceDecoder().decode(data);
  return {
    lamports: BigInt(value.lamports),
    owner: value.owner,
    data: value.data[0],
    authority: decoded.authority,
    nonce: decoded.blockhash,
    lamportsPerSignature: decoded.lamportsPerSignature,
  };
}

/**
 * Creates and initializes a nonce account on chain (CreateAccount + InitializeNonceAccount), waits
 * until it is confirmed and one more block was produced (a nonce is only advanceable in a later block
 * than the one that set it), and returns its keypair.
 */
export async function createNonceAccount(
  net: TestLocalnet,
  payer: KeyPairSigner,
  authority: string,
  lamports = NONCE_RENT,
): Promise<KeyPairSigner> {
  const nonce = await generateKeyPairSigner();
  const latest = (await net.rpc.getLatestBlockhash({ commitment: "processed" }).send()).value;
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(payer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(latest, m),
    (m) =>
      appendTransactionMessageInstructions(
        [
          getCreateAccountInstruction({
            payer,
            newAccount: nonce,
            lamports,
            space: 80n,
            programAddress: SYSTEM as Address,
          }),
          getInitializeNonceAccountInstruction({ nonceAccount: nonce.address, nonceAuthority: authority as Address }),
        ],
        m,
      ),
  );
  const signed = await signTransactionMessageWithSigners(message);
  const sent = await net.call("sendTransaction", [
    getBase64EncodedWireTransaction(signed),
    { encoding: "base64", preflightCommitment: "processed" },
  ]);
  expect(sent.error).toBeUndefined();
  const status = await waitFor("the nonce account", async () => {
    const s = (await net.call("getSignatureStatuses", [[sent.result]])).result.value[0];
    return s && s.confirmationStatus !== "processed" ? s : null;
  });
  expect(status.err).toBeNull();
  return nonce;
}

/** The AdvanceNonceAccount instruction, signed by `authority`. */
export const advance = (nonceAccount: string, authority: KeyPairSigner): Instruction =>
  getAdvanceNonceAccountInstruction({ nonceAccount: nonceAccount as Address, nonceAuthority: authority });

/**
 * An AdvanceNonceAccount built by hand, to break the rules kit keeps: the nonce account with the role
 * given, the authority a signer only when a signer is given.
 */
export const rawAdvance = (
  nonceAccount: string,
  nonceRole: AccountRole,
  authority: KeyPairSigner | string,
): Instruction => ({
  programAddress: SYSTEM as Address,
  accounts: [
    { address: nonceAccount as Address, role: nonceRole },
    { address: RECENT_BLOCKHASHES as Address, role: AccountRole.READONLY },
    typeof authority === "string"
      ? { address: authority as Address, role: AccountRole.READONLY }
      : ({ address: authority.address, role: AccountRole.READONLY_SIGNER, signer: authority } as never),
  ],
  data: new Uint8Array([4, 0, 0, 0]),
});

/** A signed transaction whose lifetime is `blockhash` (a nonce value), the instructions in the order given. */
export async function nonceTransaction(
  payer: KeyPairSigner,
  instructions: Instruction[],
  blockhash: string,
  lookupTables?: Record<string, string[]>,
): Promise<{ base64: string; signature: string }> {
  let message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(payer, m),
    (m) =>
      setTransactionMessageLifetimeUsingBlockhash({ blockhash: blockhash as Blockhash, lastValidBlockHeight: 0n }, m),
    (m) => appendTransactionMessageInstructions(instructions, m),
  );
  if (lookupTables) {
    message = compressTransactionMessageUsingAddressLookupTables(
      message,
      lookupTables as unknown as Parameters<typeof compressTransactionMessageUsingAddressLookupTables>[1],
    ) as typeof message;
  }
  const signed = await signTransactionMessageWithSigners(message);
  const signature = bs58.encode(Object.values(signed.signatures)[0]!);
  return { base64: getBase64EncodedWireTransaction(signed), signature };
}

/** Sends with preflight at processed commitment; returns the whole JSON-RPC response. */
export const sendChecked = (net: TestLocalnet, tx: { base64: string }) =>
  net.call("sendTransaction", [tx.base64, { encoding: "base64", preflightCommitment: "processed" }]);

/** Sends without preflight; the localnet must accept it (it answers the signature). */
export async function sendUnchecked(net: TestLocalnet, tx: { base64: string; signature: string }): Promise<void> {
  const sent = await net.call("sendTransaction", [tx.base64, { encoding: "base64", skipPreflight: true }]);
  expect(sent.result).toBe(tx.signature);
}

/** Waits until the confirmed slot is `n` slots past the processed slot of now. */
export async function slotsPass(net: TestLocalnet, n = 3): Promise<void> {
  const slot = (await net.call("getSlot", [{ commitment: "processed" }])).result;
  await waitFor(`${n} slots`, async () => (await net.call("getSlot", [{ commitment: "confirmed" }])).result > slot + n);
}

/** The transaction was never included: no status, no transaction record. */
export async function expectNeverIncluded(net: TestLocalnet, signature: string): Promise<void> {
  expect(
    (await net.call("getSignatureStatuses", [[signature], { searchTransactionHistory: true }])).result.value,
  ).toEqual([null]);
  expect(
    (await net.call("getTransaction", [signature, { commitment: "confirmed", maxSupportedTransactionVersion: 0 }]))
      .result,
  ).toBeNull();
}

/** Waits for the transaction to be confirmed; returns getTransaction's result. */
export async function landed(net: TestLocalnet, signature: string): Promise<any> {
  return waitFor(
    "the transaction to land",
    async () =>
      (await net.call("getTransaction", [signature, { commitment: "confirmed", maxSupportedTransactionVersion: 0 }]))
        .result,
  );
}
