/**
 * A signed legacy transaction: optional compute budget instructions, then one System transfer.
 * Written by hand and signed with node:crypto because the generator makes tens of them per slot
 * synchronously (kit's signing is async WebCrypto); tests decode them with kit and with the
 * chain's own decoder.
 */
import { sign } from "node:crypto";
import bs58 from "bs58";
import type { SeededKeypair } from "../world/seeded-random.ts";

const SYSTEM_PROGRAM = new Uint8Array(32);
export const COMPUTE_BUDGET_PROGRAM = "ComputeBudget111111111111111111111111111111";
const COMPUTE_BUDGET_BYTES = bs58.decode(COMPUTE_BUDGET_PROGRAM);

export interface TransferSpec {
  payer: SeededKeypair;
  recipient: Uint8Array;
  lamports: bigint;
  /** Requested compute units (SetComputeUnitLimit); null to leave the default. */
  unitLimit: number | null;
  /** Micro-lamports per CU (SetComputeUnitPrice); 0 to set none. */
  unitPrice: bigint;
  /** 32 raw bytes of the recent blockhash. */
  blockhash: Uint8Array;
}

/** Builds and signs the transaction; returns its wire bytes. */
export function buildTransfer(spec: TransferSpec): Uint8Array {
  const instructions: Uint8Array[] = [];
  if (spec.unitLimit !== null) {
    const data = Buffer.alloc(5);
    data[0] = 2;
    data.writeUInt32LE(spec.unitLimit, 1);
    instructions.push(Uint8Array.of(3, 0, data.length, ...data));
  }
  if (spec.unitPrice > 0n) {
    const data = Buffer.alloc(9);
    data[0] = 3;
    data.writeBigUInt64LE(spec.unitPrice, 1);
    instructions.push(Uint8Array.of(3, 0, data.length, ...data));
  }
  const transfer = Buffer.alloc(12);
  transfer.writeUInt32LE(2, 0);
  transfer.writeBigUInt64LE(spec.lamports, 4);
  instructions.push(Uint8Array.of(2, 2, 0, 1, transfer.length, ...transfer));

  // Header: one signer (the payer), two read-only unsigned keys (the two programs).
  const message = Buffer.concat([
    Uint8Array.of(1, 0, 2, 4),
    spec.payer.publicKey,
    spec.recipient,
    SYSTEM_PROGRAM,
    COMPUTE_BUDGET_BYTES,
    spec.blockhash,
    Uint8Array.of(instructions.length),
    ...instructions,
  ]);
  const signature = sign(null, message, spec.payer.privateKey);
  return new Uint8Array(Buffer.concat([Uint8Array.of(1), signature, message]));
}
