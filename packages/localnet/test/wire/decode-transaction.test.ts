/**
 * The wire decoder against kit's decoders (differential, on valid and mutated transactions) and
 * against agave's sanitize rules.
 */
import { describe, expect, it } from "vitest";
import {
  appendTransactionMessageInstructions,
  createTransactionMessage,
  generateKeyPairSigner,
  getCompiledTransactionMessageDecoder,
  getCompiledTransactionMessageEncoder,
  getTransactionEncoder,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
} from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import { getSetComputeUnitPriceInstruction } from "@solana-program/compute-budget";
import { decodeTransaction, readShortU16, replaceBlockhash } from "../../src/wire/decode-transaction.ts";
import { decodeBase64Strict, decodeWirePayload } from "../../src/wire/binary-encoding.ts";
import { JsonRpcError } from "../../src/rpc/protocol.ts";
import { createPrng, randomInt } from "../../src/prng.ts";

const BLOCKHASH = { blockhash: "GRkRZ8PAcLb1kQqzp7ricZsUdvZ1Muru1Ae3SsQGqXxe", lastValidBlockHeight: 0n } as never;

async function build(version: 0 | "legacy"): Promise<Uint8Array> {
  const payer = await generateKeyPairSigner();
  const other = await generateKeyPairSigner();
  const tx = await signTransactionMessageWithSigners(
    pipe(
      createTransactionMessage({ version }),
      (m) => setTransactionMessageFeePayerSigner(payer, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(BLOCKHASH, m),
      (m) =>
        appendTransactionMessageInstructions(
          [
            getSetComputeUnitPriceInstruction({ microLamports: 5n }),
            getTransferSolInstruction({ source: other, destination: payer.address, amount: 9n }),
          ],
          m,
        ),
    ),
  );
  return new Uint8Array(getTransactionEncoder().encode(tx));
}

/**
 * Which of agave's sanitize rules the message, as kit decoded it, breaks (null when none): kit decodes but does not
 * sanitize, so where the decoder refuses bytes kit reads, this says whether the refusal is one of agave's rules.
 */
function sanitizeViolation(kit: NonNullable<ReturnType<typeof viaKit>>): string | null {
  const [required, readonlySigned, readonlyUnsigned] = kit.header as [number, number, number];
  const numStatic = kit.staticKeys.length;
  const total = numStatic + kit.lookupSizes.reduce((a, b) => a + b, 0);
  if (required !== kit.numSignatures) return "signature count is not the header's";
  if (required + readonlyUnsigned > numStatic) return "header counts more keys than there are";
  if (readonlySigned >= required) return "no writable signer";
  if (kit.lookupSizes.includes(0)) return "an empty lookup";
  if (numStatic === 0) return "no keys";
  if (total > 256) return "over 256 accounts";
  for (const [program, accounts] of kit.instructions as [number, number[], string][]) {
    if (program === 0 || program >= numStatic) return "program index out of range";
    if (accounts.some((a) => a >= total)) return "account index out of range";
  }
  if (new Set(kit.staticKeys).size !== numStatic) return "a key loaded twice";
  return null;
}

/** What kit makes of the same bytes, in the decoder's vocabulary; null when kit refuses them. */
function viaKit(bytes: Uint8Array) {
  try {
    const count = readShortU16(bytes, 0);
    if (!count) return null;
    const start = count[1] + 64 * count[0];
    const [message, end] = getCompiledTransactionMessageDecoder().read(bytes, start);
    // kit's encoder refuses addresses whose base58 is under 32 characters (keys with leading zero
    // bytes) although they are valid keys; only a successful re-encoding is compared.
    let reencoded: Uint8Array | undefined;
    try {
      reencoded = new Uint8Array(getCompiledTransactionMessageEncoder().encode(message));
    } catch {
      reencoded = undefined;
    }
    if (reencoded && Buffer.compare(Buffer.from(reencoded), Buffer.from(bytes.subarray(start, end))) !== 0) return null;
    return {
      version: message.version,
      numSignatures: count[0],
      lookupSizes: (
        (
          message as {
            addressTableLookups?: readonly { readonlyIndexes: readonly number[]; writableIndexes: readonly number[] }[];
          }
        ).addressTableLookups ?? []
      ).map((l) => l.readonlyIndexes.length + l.writableIndexes.length),
      staticKeys: message.staticAccounts as string[],
      blockhash: (message as { lifetimeToken: string }).lifetimeToken,
      header: [
        message.header.numSignerAccounts,
        message.header.numReadonlySignerAccounts,
        message.header.numReadonlyNonSignerAccounts,
      ],
      instructions: (
        message as {
          instructions: readonly {
            programAddressIndex: number;
            accountIndices?: readonly number[];
            data?: Uint8Array;
          }[];
        }
      ).instructions.map((ix) => [
        ix.programAddressIndex,
        [...(ix.accountIndices ?? [])],
        Buffer.from(ix.data ?? []).toString("hex"),
      ]),
    };
  } catch {
    return null;
  }
}

describe("decodeTransaction", () => {
  it("decodes legacy and v0 transactions exactly as kit does", async () => {
    for (const version of ["legacy", 0] as const) {
      const bytes = await build(version);
      const tx = decodeTransaction(bytes);
      const kit = viaKit(bytes)!;
      expect(tx.message.version).toBe(version);
      expect(tx.message.staticKeys).toEqual(kit.staticKeys);
      expect(tx.message.recentBlockhash).toBe(kit.blockhash);
      const h = tx.message.header;
      expect([h.numRequiredSignatures, h.numReadonlySignedAccounts, h.numReadonlyUnsignedAccounts]).toEqual(kit.header);
      expect(
        tx.message.instructions.map((ix) => [ix.programIdIndex, ix.accounts, Buffer.from(ix.data).toString("hex")]),
      ).toEqual(kit.instructions);
      expect(tx.wire).toEqual(bytes);
      expect(tx.signatures).toHaveLength(2);
    }
  });

  it("agrees with kit both ways on 20,000 seeded mutations and never throws anything but -32602", async () => {
    const random = createPrng(7);
    const seeds = [await build("legacy"), await build(0)];
    let accepted = 0;
    let refusedByBoth = 0;
    let refusedBySanitize = 0;
    for (let i = 0; i < 20_000; i++) {
      const bytes = seeds[i % 2]!.slice(
        0,
        randomInt(random, 4) === 0 ? randomInt(random, seeds[i % 2]!.length + 1) : undefined,
      );
      for (let m = 1 + randomInt(random, 3); m > 0 && bytes.length > 0; m--)
        bytes[randomInt(random, bytes.length)] = randomInt(random, 256);
      let mine;
      try {
        mine = decodeTransaction(bytes);
      } catch (err) {
        expect(err).toBeInstanceOf(JsonRpcError);
        expect((err as JsonRpcError).code).toBe(-32602);
        // The other way: bytes the decoder refuses, kit refuses too, or kit reads them and they break one of
        // agave's sanitize rules (which kit does not apply), and the decoder said so.
        const kit = viaKit(bytes);
        const hex = Buffer.from(bytes).toString("hex");
        if (kit === null) {
          refusedByBoth++;
          continue;
        }
        const violation = sanitizeViolation(kit);
        expect(violation, `the decoder refused bytes kit reads and agave would sanitize: ${hex}`).not.toBeNull();
        expect((err as JsonRpcError).message, `${violation}: ${hex}`).toMatch(
          violation === "a key loaded twice" ? /Account loaded twice/ : /failed to sanitize/,
        );
        refusedBySanitize++;
        continue;
      }
      accepted++;
      const kit = viaKit(bytes);
      expect(kit, `kit refused bytes the decoder accepted: ${Buffer.from(bytes).toString("hex")}`).not.toBeNull();
      expect(sanitizeViolation(kit!), `accepted: ${Buffer.from(bytes).toString("hex")}`).toBeNull();
      expect(mine.message.staticKeys).toEqual(kit!.staticKeys);
      expect(mine.message.recentBlockhash).toBe(kit!.blockhash);
      expect(
        mine.message.instructions.map((ix) => [ix.programIdIndex, ix.accounts, Buffer.from(ix.data).toString("hex")]),
      ).toEqual(kit!.instructions);
    }
    expect(accepted).toBeGreaterThan(1000); // mutations in signatures and keys stay decodable
    expect(refusedByBoth).toBeGreaterThan(1000);
    expect(refusedBySanitize).toBeGreaterThan(100);
  });

  it("drops trailing bytes like agave and refuses aliased short-vec lengths", async () => {
    const bytes = await build(0);
    const padded = new Uint8Array([...bytes, 1, 2, 3]);
    expect(decodeTransaction(padded).wire).toEqual(bytes);
    expect(readShortU16(new Uint8Array([0x81, 0x00]), 0)).toBeNull();
    expect(readShortU16(new Uint8Array([0xff, 0xff, 0x03]), 0)).toEqual([0xffff, 3]);
    expect(readShortU16(new Uint8Array([0xff, 0xff, 0x04]), 0)).toBeNull();
    // Signature count encoded as 0x82 0x00 instead of 0x02.
    const aliased = new Uint8Array([0x82, 0x00, ...bytes.subarray(1)]);
    expect(() => decodeTransaction(aliased)).toThrow(
      /failed to deserialize solana_transaction::versioned::VersionedTransaction/,
    );
  });

  it("applies agave's sanitize rules", async () => {
    const bytes = await build("legacy");
    const tx = decodeTransaction(bytes);
    const messageStart = bytes.length - tx.message.bytes.length;
    const at = (offset: number, value: number) => {
      const copy = bytes.slice();
      copy[messageStart + offset] = value;
      return copy;
    };
    const sanitize = /Transaction failed to sanitize accounts offsets correctly/;
    expect(() => decodeTransaction(at(1, 2))).toThrow(sanitize); // readonly signed >= required
    expect(() => decodeTransaction(at(0, 1))).toThrow(sanitize); // signature count != required
    // First instruction's program index set to 0 (the fee payer), then beyond the keys.
    const ixStart = tx.message.blockhashOffset + 32 + 1;
    expect(() => decodeTransaction(at(ixStart, 0))).toThrow(sanitize);
    expect(() => decodeTransaction(at(ixStart, 200))).toThrow(sanitize);
    // Duplicate keys: copy key 0 over key 2.
    const dup = bytes.slice();
    const keysAt = messageStart + 4;
    dup.set(bytes.subarray(keysAt, keysAt + 32), keysAt + 64);
    expect(() => decodeTransaction(dup)).toThrow(/Account loaded twice/);
  });

  it("replaces the blockhash in place, leaving signatures as they are", async () => {
    const tx = decodeTransaction(await build(0));
    const replaced = replaceBlockhash(tx, "11111111111111111111111111111111");
    expect(replaced.message.recentBlockhash).toBe("11111111111111111111111111111111");
    expect(decodeTransaction(replaced.wire).message.recentBlockhash).toBe("11111111111111111111111111111111");
    expect(replaced.wire.subarray(0, 129)).toEqual(tx.wire.subarray(0, 129));
  });
});

describe("strict payload decoding", () => {
  it("refuses what a strict base64 decoder refuses", () => {
    expect(decodeBase64Strict("AQID")).toEqual(new Uint8Array([1, 2, 3]));
    expect(decodeBase64Strict("AQI=")).toEqual(new Uint8Array([1, 2]));
    expect(decodeBase64Strict("AQJ=")).toBeNull(); // non-zero trailing bits
    expect(decodeBase64Strict("AQ I")).toBeNull();
    expect(decodeBase64Strict("AQI")).toBeNull();
    expect(() => decodeWirePayload("!!!!", "base64", "T")).toThrow(/invalid base64 encoding/);
    expect(() => decodeWirePayload("0OIl", "base58", "T")).toThrow(/invalid base58 encoding/);
    expect(() => decodeWirePayload("A".repeat(1645), "base64", "T")).toThrow(/base64 encoded T too large: 1645 bytes/);
  });
});
