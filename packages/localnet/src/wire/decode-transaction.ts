/**
 * Full decoding and sanitizing of a wire transaction before anything reaches LiteSVM.
 *
 * LiteSVM aborts the whole process on bytes it cannot deserialize and on some decodable but
 * inconsistent messages, so this file is the gate: the bytes must decode completely under the
 * same rules as agave's bincode (short-vec lengths in as few bytes as possible, no reads past the
 * end), and pass every check agave's `sanitize` applies. Only the canonical bytes (trailing bytes
 * dropped, as agave ignores them) are handed on.
 */
import bs58 from "bs58";
import { invalidParams, type JsonRpcError } from "../rpc/protocol.ts";

/** The Rust type name agave prints in deserialization errors. */
export const VERSIONED_TRANSACTION_TYPE = "solana_transaction::versioned::VersionedTransaction";
/** The Rust type name agave prints for getFeeForMessage. */
export const VERSIONED_MESSAGE_TYPE = "solana_message::versioned::VersionedMessage";

/** Message header counts. */
export interface MessageHeader {
  numRequiredSignatures: number;
  numReadonlySignedAccounts: number;
  numReadonlyUnsignedAccounts: number;
}

/** One compiled instruction. */
export interface CompiledInstruction {
  programIdIndex: number;
  accounts: number[];
  data: Uint8Array;
}

/** One address table lookup of a v0 message. */
export interface AddressTableLookup {
  accountKey: string;
  writableIndexes: number[];
  readonlyIndexes: number[];
}

/** A fully decoded, sanitized message. */
export interface DecodedMessage {
  /** Canonical message bytes (what the signatures sign). */
  bytes: Uint8Array;
  version: "legacy" | 0;
  header: MessageHeader;
  staticKeys: string[];
  /** Raw 32-byte public keys, same order as `staticKeys`. */
  staticKeyBytes: Uint8Array[];
  recentBlockhash: string;
  /** Offset of the 32 blockhash bytes inside `bytes` (for replaceRecentBlockhash). */
  blockhashOffset: number;
  instructions: CompiledInstruction[];
  lookups: AddressTableLookup[];
}

/** A fully decoded, sanitized transaction. */
export interface DecodedTransaction {
  /** Canonical wire bytes: signatures then message, trailing bytes removed. */
  wire: Uint8Array;
  signatures: Uint8Array[];
  /** Base58 of each signature; `signatureStrings[0]` identifies the transaction. */
  signatureStrings: string[];
  message: DecodedMessage;
}

function deserializeError(typeName: string, detail: string): JsonRpcError {
  return invalidParams(`failed to deserialize ${typeName}: ${detail}`);
}

function sanitizeError(): JsonRpcError {
  return invalidParams("invalid transaction: Transaction failed to sanitize accounts offsets correctly");
}

/** Reads a compact-u16 the way agave's short_vec does (max 3 bytes, no aliases); null on failure. */
export function readShortU16(bytes: Uint8Array, offset: number): [value: number, next: number] | null {
  let value = 0;
  for (let n = 0; n < 3; n++) {
    if (offset + n >= bytes.length) return null;
    const byte = bytes[offset + n]!;
    if (byte === 0 && n > 0) return null; // alias: a longer encoding of a smaller value
    value |= (byte & 0x7f) << (7 * n);
    if ((byte & 0x80) === 0) {
      if (value > 0xffff) return null;
      return [value, offset + n + 1];
    }
    if (n === 2) return null;
  }
  return null;
}

/** A bounds-checked cursor over message bytes; every read failure is a deserialization error. */
class Reader {
  readonly bytes: Uint8Array;
  offset = 0;
  constructor(bytes: Uint8Array) {
    this.bytes = bytes;
  }
  u8(): number {
    if (this.offset >= this.bytes.length) throw EOF;
    return this.bytes[this.offset++]!;
  }
  shortU16(): number {
    const r = readShortU16(this.bytes, this.offset);
    if (r === null) throw this.offset >= this.bytes.length ? EOF : ALIAS;
    this.offset = r[1];
    return r[0];
  }
  take(n: number): Uint8Array {
    if (this.offset + n > this.bytes.length) throw EOF;
    const out = this.bytes.subarray(this.offset, this.offset + n);
    this.offset += n;
    return out;
  }
}

const EOF = "io error: unexpected end of file";
const ALIAS = "invalid value: a compact-u16 must be encoded in as few bytes as possible";

/**
 * Decodes and sanitizes message bytes starting at `bytes[0]` (anything after the message is
 * ignored, as agave does). Throws `-32602` with agave's wording.
 *
 * Hand-written because kit's decoder costs ~150 µs per transfer here (it base58-encodes every
 * key eagerly); the differential test in test/wire checks it against kit's
 * `getCompiledTransactionMessageDecoder` on valid and mutated inputs.
 */
export function decodeMessage(bytes: Uint8Array, typeName: string): DecodedMessage {
  const r = new Reader(bytes);
  let version: "legacy" | 0;
  const header: MessageHeader = {
    numRequiredSignatures: 0,
    numReadonlySignedAccounts: 0,
    numReadonlyUnsignedAccounts: 0,
  };
  const staticKeyBytes: Uint8Array[] = [];
  const instructions: CompiledInstruction[] = [];
  const lookups: AddressTableLookup[] = [];
  let blockhashOffset = 0;
  try {
    const first = r.u8();
    if (first & 0x80) {
      if ((first & 0x7f) !== 0)
        throw `invalid value: integer \`${first & 0x7f}\`, expected a supported message version`;
      version = 0;
      header.numRequiredSignatures = r.u8();
    } else {
      version = "legacy";
      header.numRequiredSignatures = first;
    }
    header.numReadonlySignedAccounts = r.u8();
    header.numReadonlyUnsignedAccounts = r.u8();
    const numKeys = r.shortU16();
    for (let i = 0; i < numKeys; i++) staticKeyBytes.push(r.take(32));
    blockhashOffset = r.offset;
    r.take(32);
    const numInstructions = r.shortU16();
    for (let i = 0; i < numInstructions; i++) {
      const programIdIndex = r.u8();
      const numAccounts = r.shortU16();
      const accounts = Array.from(r.take(numAccounts));
      const dataLength = r.shortU16();
      instructions.push({ programIdIndex, accounts, data: r.take(dataLength) });
    }
    if (version === 0) {
      const numLookups = r.shortU16();
      for (let i = 0; i < numLookups; i++) {
        const accountKey = bs58.encode(r.take(32));
        const writableIndexes = Array.from(r.take(r.shortU16()));
        const readonlyIndexes = Array.from(r.take(r.shortU16()));
        lookups.push({ accountKey, writableIndexes, readonlyIndexes });
      }
    }
  } catch (e) {
    if (typeof e === "string") throw deserializeError(typeName, e);
    throw e;
  }
  const canonical = bytes.slice(0, r.offset);
  const message: DecodedMessage = {
    bytes: canonical,
    version,
    header,
    staticKeys: staticKeyBytes.map((k) => bs58.encode(k)),
    staticKeyBytes: staticKeyBytes.map((k) => k.slice()),
    recentBlockhash: bs58.encode(canonical.subarray(blockhashOffset, blockhashOffset + 32)),
    blockhashOffset,
    instructions: instructions.map((ix) => ({ ...ix, data: ix.data.slice() })),
    lookups,
  };
  sanitizeMessage(message);
  return message;
}

/** agave's `Message::sanitize` (legacy and v0) plus the duplicate-key check of `SanitizedTransaction`. */
function sanitizeMessage(m: DecodedMessage): void {
  const { header } = m;
  const numStatic = m.staticKeys.length;
  if (header.numRequiredSignatures + header.numReadonlyUnsignedAccounts > numStatic) throw sanitizeError();
  if (header.numReadonlySignedAccounts >= header.numRequiredSignatures) throw sanitizeError();
  let numLoaded = 0;
  for (const lookup of m.lookups) {
    const n = lookup.writableIndexes.length + lookup.readonlyIndexes.length;
    if (n === 0) throw sanitizeError();
    numLoaded += n;
  }
  if (numStatic === 0) throw sanitizeError();
  const total = numStatic + numLoaded;
  if (total > 256) throw sanitizeError();
  for (const ix of m.instructions) {
    if (ix.programIdIndex === 0 || ix.programIdIndex >= numStatic) throw sanitizeError();
    for (const a of ix.accounts) if (a >= total) throw sanitizeError();
  }
  if (new Set(m.staticKeys).size !== numStatic) throw invalidParams("invalid transaction: Account loaded twice");
}

/** Decodes and sanitizes wire transaction bytes (already base58/base64-decoded). Throws `-32602`. */
export function decodeTransaction(bytes: Uint8Array): DecodedTransaction {
  const typeName = VERSIONED_TRANSACTION_TYPE;
  const count = readShortU16(bytes, 0);
  if (count === null) throw deserializeError(typeName, "io error: unexpected end of file");
  const [numSignatures, sigStart] = count;
  const messageStart = sigStart + 64 * numSignatures;
  if (messageStart > bytes.length) throw deserializeError(typeName, "io error: unexpected end of file");
  const message = decodeMessage(bytes.subarray(messageStart), typeName);
  if (message.header.numRequiredSignatures !== numSignatures) throw sanitizeError();
  if (numSignatures > message.staticKeys.length) throw sanitizeError();
  const signatures: Uint8Array[] = [];
  for (let i = 0; i < numSignatures; i++) signatures.push(bytes.slice(sigStart + 64 * i, sigStart + 64 * (i + 1)));
  const wire = bytes.slice(0, messageStart + message.bytes.length);
  return { wire, signatures, signatureStrings: signatures.map((s) => bs58.encode(s)), message };
}

/** Returns a copy of the wire bytes with the message's recent blockhash replaced (signatures untouched). */
export function replaceBlockhash(tx: DecodedTransaction, blockhash: string): DecodedTransaction {
  const hashBytes = bs58.decode(blockhash);
  const messageBytes = tx.message.bytes.slice();
  messageBytes.set(hashBytes, tx.message.blockhashOffset);
  const wire = tx.wire.slice();
  wire.set(messageBytes, wire.length - messageBytes.length);
  return { ...tx, wire, message: { ...tx.message, bytes: messageBytes, recentBlockhash: blockhash } };
}
