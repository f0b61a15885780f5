/**
 * Decoding and checking of Solana wire transactions (legacy and v0), shared by every core that accepts
 * a transaction from a client. Untrusted bytes stop here: whatever passes is structurally sound.
 */
import { createPublicKey, verify } from "node:crypto";
import { getBase58Decoder, getBase58Encoder } from "@solana/kit";
import { getCompiledTransactionMessageDecoder } from "@solana/kit";
import type { CompiledTransactionMessage, CompiledTransactionMessageWithLifetime } from "@solana/kit";
import { SolgateError } from "../errors.ts";
import { SIGNATURE_BYTES } from "./wire-bytes.ts";

/** The largest transaction a Solana node accepts (IPv6 MTU minus headers). */
export const MAX_TRANSACTION_BYTES = 1232;

const base58 = getBase58Decoder();
const base58Bytes = getBase58Encoder();
const messageDecoder = getCompiledTransactionMessageDecoder();

/** A compiled legacy or v0 message with its lifetime token (the recent blockhash or nonce). */
export type CompiledMessage = Exclude<CompiledTransactionMessage, { version: 1 }> &
  CompiledTransactionMessageWithLifetime;

/** A transaction whose bytes decoded cleanly and whose structure is consistent. */
export interface DecodedTransaction {
  /** The wire bytes as received, never changed. */
  readonly wire: Uint8Array;
  /** The message bytes (what the signatures sign). */
  readonly messageBytes: Uint8Array;
  /** The signatures in order, one per required signer. */
  readonly signatures: readonly Uint8Array[];
  /** The first signature in base58: the transaction's id. */
  readonly signature: string;
  /** The compiled message. */
  readonly message: CompiledMessage;
  /** `legacy` or `0`. */
  readonly version: "legacy" | 0;
  /** The recent blockhash (or durable nonce value) the message names. */
  readonly blockhash: string;
  /** The addresses that must sign, in order. */
  readonly signers: readonly string[];
}

function invalid(message: string, details: Record<string, unknown> = {}): SolgateError {
  return new SolgateError("INVALID_TRANSACTION", message, details);
}

/** Reads a compact-u16 (shortvec) length prefix; returns [value, bytesRead] or undefined if malformed. */
function readShortVec(bytes: Uint8Array, offset: number): [number, number] | undefined {
  let value = 0;
  for (let i = 0; i < 3; i++) {
    const byte = bytes[offset + i];
    if (byte === undefined) return undefined;
    value |= (byte & 0x7f) << (7 * i);
    if ((byte & 0x80) === 0) return [value, i + 1];
  }
  return undefined;
}

/**
 * Decodes wire bytes into a transaction and checks that it is well formed: size, signature count against the
 * header, account indexes in range, no duplicate accounts. Signatures are not verified here (see
 * {@link assertSignaturesValid}) so that unsigned drafts can be decoded too.
 * @throws SolgateError INVALID_TRANSACTION naming what is wrong.
 */
export function decodeWireTransaction(wire: Uint8Array): DecodedTransaction {
  if (wire.length === 0) throw invalid("transaction is empty");
  if (wire.length > MAX_TRANSACTION_BYTES) {
    throw invalid(`transaction is ${wire.length} bytes; the limit is ${MAX_TRANSACTION_BYTES}`, { size: wire.length });
  }
  const prefix = readShortVec(wire, 0);
  if (!prefix) throw invalid("transaction is truncated: bad signature count");
  const [count, prefixLength] = prefix;
  const messageStart = prefixLength + count * SIGNATURE_BYTES;
  if (count === 0) throw invalid("transaction carries no signature slots");
  if (messageStart >= wire.length) throw invalid("transaction is truncated: signatures run past the end");
  const messageBytes = wire.subarray(messageStart);

  // Kit also decodes v1 messages; the version check below narrows this to legacy and v0.
  let message: CompiledTransactionMessage & CompiledTransactionMessageWithLifetime;
  let consumed: number;
  try {
    [message, consumed] = messageDecoder.read(messageBytes, 0);
  } catch (error) {
    throw invalid(`message does not decode: ${(error as Error).message}`);
  }
  if (consumed !== messageBytes.length) {
    throw invalid(`message has ${messageBytes.length - consumed} trailing bytes`);
  }
  if (message.version !== "legacy" && message.version !== 0) {
    throw invalid(`transaction version ${String(message.version)} is not supported (legacy and v0 are)`);
  }
  checkStructure(message, count);

  const signatures: Uint8Array[] = [];
  for (let i = 0; i < count; i++) {
    signatures.push(wire.subarray(prefixLength + i * SIGNATURE_BYTES, prefixLength + (i + 1) * SIGNATURE_BYTES));
  }
  const signers = message.staticAccounts.slice(0, count).map(String);
  return {
    wire,
    messageBytes,
    signatures,
    signature: base58.decode(signatures[0]),
    message,
    version: message.version,
    blockhash: String(message.lifetimeToken),
    signers,
  };
}

function checkStructure(message: CompiledMessage, signatureCount: number): void {
  const { header, staticAccounts, instructions } = message;
  if (header.numSignerAccounts !== signatureCount) {
    throw invalid(
      `header requires ${header.numSignerAccounts} signatures but the transaction carries ${signatureCount}`,
    );
  }
  if (header.numSignerAccounts > staticAccounts.length) {
    throw invalid("header names more signers than the message has accounts");
  }
  if (header.numReadonlySignerAccounts >= header.numSignerAccounts) {
    throw invalid("the fee payer must be a writable signer");
  }
  if (header.numReadonlyNonSignerAccounts > staticAccounts.length - header.numSignerAccounts) {
    throw invalid("header names more read-only accounts than the message has");
  }
  if (new Set(staticAccounts).size !== staticAccounts.length) throw invalid("message lists an account twice");
  const lookups = message.version === 0 ? (message.addressTableLookups ?? []) : [];
  const loaded = lookups.reduce((n, l) => n + l.writableIndexes.length + l.readonlyIndexes.length, 0);
  const total = staticAccounts.length + loaded;
  if (total > 256) throw invalid(`message loads ${total} accounts; the limit is 256`);
  instructions.forEach((ix, i) => {
    if (ix.programAddressIndex >= staticAccounts.length || ix.programAddressIndex === 0) {
      throw invalid(
        `instruction ${i} names program account ${ix.programAddressIndex}, which is not a static non-payer account`,
      );
    }
    for (const index of ix.accountIndices ?? []) {
      if (index >= total) throw invalid(`instruction ${i} names account ${index}; the message has ${total}`);
    }
  });
}

const SPKI_ED25519_PREFIX = Uint8Array.from([0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00]);

/** Verifies one ed25519 signature of `message` by the public key at `address`. */
export function isSignatureValid(address: string, message: Uint8Array, signature: Uint8Array): boolean {
  const key = createPublicKey({
    key: Buffer.concat([SPKI_ED25519_PREFIX, base58Bytes.encode(address) as Uint8Array]),
    format: "der",
    type: "spki",
  });
  return verify(null, message, key, signature);
}

/**
 * Checks that every required signature is present (not all zeros) and valid over the message.
 * @throws SolgateError INVALID_TRANSACTION naming the first signer whose signature is missing or wrong.
 */
export function assertSignaturesValid(tx: DecodedTransaction): void {
  const seen = new Set<string>();
  tx.signatures.forEach((signature, i) => {
    const signer = tx.signers[i];
    if (signature.every((b) => b === 0)) {
      throw invalid(`signature ${i} (signer ${signer}) is missing`, { signer, index: i });
    }
    const text = base58.decode(signature);
    if (seen.has(text))
      throw invalid(`signature ${i} (signer ${signer}) repeats an earlier signature`, { signer, index: i });
    seen.add(text);
    if (!isSignatureValid(signer, tx.messageBytes, signature)) {
      throw invalid(`signature ${i} (signer ${signer}) does not verify`, { signer, index: i });
    }
  });
}

/** The accounts a message write-locks from its static keys (lookup-table accounts are resolved elsewhere). */
export function staticWritableAccounts(message: CompiledMessage): string[] {
  const { header, staticAccounts } = message;
  const signers = header.numSignerAccounts;
  const writableSigners = signers - header.numReadonlySignerAccounts;
  const writableUnsigned = staticAccounts.length - signers - header.numReadonlyNonSignerAccounts;
  return [
    ...staticAccounts.slice(0, writableSigners),
    ...staticAccounts.slice(signers, signers + writableUnsigned),
  ].map(String);
}
