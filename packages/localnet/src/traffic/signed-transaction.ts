/**
 * A signed legacy transaction from instructions, compiled and signed by hand (node:crypto, synchronous)
 * as transfer-transaction.ts does for the plain transfers: the collection traffic builds several per slot.
 * Keys are ordered as Solana's message compiler orders them: the fee payer, then writable signers,
 * read-only signers, writable non-signers, read-only non-signers, each group in first-use order.
 */
import { sign } from "node:crypto";
import bs58 from "bs58";
import type { SeededKeypair } from "../world/seeded-random.ts";

export interface InstructionAccount {
  key: Uint8Array;
  signer?: boolean;
  writable?: boolean;
}

export interface Instruction {
  program: Uint8Array;
  accounts: readonly InstructionAccount[];
  data: Uint8Array;
}

const PACKET_DATA_SIZE = 1232;

function shortU16(n: number): number[] {
  const out: number[] = [];
  let v = n;
  for (;;) {
    const byte = v & 0x7f;
    v >>= 7;
    if (v === 0) {
      out.push(byte);
      return out;
    }
    out.push(byte | 0x80);
  }
}

/** Compiles, signs (payer first, then `signers` in the order their keys appear) and returns the wire bytes. */
export function buildSignedTransaction(
  payer: SeededKeypair,
  signers: readonly SeededKeypair[],
  instructions: readonly Instruction[],
  blockhash: Uint8Array,
): Uint8Array {
  const metas = new Map<string, { key: Uint8Array; signer: boolean; writable: boolean; order: number }>();
  const add = (key: Uint8Array, signer: boolean, writable: boolean) => {
    const id = bs58.encode(key);
    const known = metas.get(id);
    if (known === undefined) metas.set(id, { key, signer, writable, order: metas.size });
    else {
      known.signer ||= signer;
      known.writable ||= writable;
    }
  };
  add(payer.publicKey, true, true);
  for (const ix of instructions) {
    for (const a of ix.accounts) add(a.key, a.signer === true, a.writable === true);
    add(ix.program, false, false);
  }
  const rank = (m: { signer: boolean; writable: boolean }) => (m.signer ? (m.writable ? 0 : 1) : m.writable ? 2 : 3);
  const ordered = [...metas.values()].sort((a, b) =>
    a.order === 0 ? -1 : b.order === 0 ? 1 : rank(a) - rank(b) || a.order - b.order,
  );
  const index = new Map(ordered.map((m, i) => [bs58.encode(m.key), i]));
  const numSigners = ordered.filter((m) => m.signer).length;
  const readonlySigned = ordered.filter((m) => m.signer && !m.writable).length;
  const readonlyUnsigned = ordered.filter((m) => !m.signer && !m.writable).length;
  const compiled = instructions.map((ix) =>
    Buffer.from([
      index.get(bs58.encode(ix.program))!,
      ...shortU16(ix.accounts.length),
      ...ix.accounts.map((a) => index.get(bs58.encode(a.key))!),
      ...shortU16(ix.data.length),
      ...ix.data,
    ]),
  );
  const message = Buffer.concat([
    Uint8Array.of(numSigners, readonlySigned, readonlyUnsigned),
    Uint8Array.from(shortU16(ordered.length)),
    ...ordered.map((m) => m.key),
    blockhash,
    Uint8Array.from(shortU16(compiled.length)),
    ...compiled,
  ]);
  const byKey = new Map([payer, ...signers].map((k) => [k.address, k]));
  const signatures = ordered.slice(0, numSigners).map((m) => {
    const keypair = byKey.get(bs58.encode(m.key));
    if (keypair === undefined) throw new Error(`no keypair for signer ${bs58.encode(m.key)}`);
    return sign(null, message, keypair.privateKey);
  });
  const wire = Buffer.concat([Uint8Array.from(shortU16(numSigners)), ...signatures, message]);
  // What a validator would refuse (PACKET_DATA_SIZE) is never built.
  if (wire.length > PACKET_DATA_SIZE)
    throw new Error(`transaction of ${wire.length} bytes is over ${PACKET_DATA_SIZE}`);
  return new Uint8Array(wire);
}
