/**
 * The synchronous PDA derivation against kit's, and against real mainnet addresses: the fixture
 * metadata accounts sit at the metadata PDA of their mint, the token accounts at the holder's ATA,
 * and the metadata's edition_nonce is the master edition PDA's bump.
 */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import bs58 from "bs58";
import { getAddressDecoder, getProgramDerivedAddress, isOffCurveAddress, type Address } from "@solana/kit";
import { findProgramAddressSync, isOnCurve } from "../../src/world/pda.ts";
import {
  associatedTokenAddress,
  compressedAssetId,
  masterEditionAddress,
  metadataAddress,
  TOKEN_METADATA_PROGRAM,
  TOKEN_PROGRAM,
} from "../../src/world/program-ids.ts";
import { loadRealAccounts } from "../../src/world/real-fixtures.ts";
import { decodeMetadata } from "../../src/world/token-metadata.ts";
import { decodeTokenAccount } from "../../src/world/spl-token-layout.ts";

const addressDecoder = getAddressDecoder();

describe("isOnCurve", () => {
  it("agrees with kit on random 32-byte strings (about half lie on the curve)", () => {
    let on = 0;
    for (let i = 0; i < 1500; i++) {
      const bytes = new Uint8Array(randomBytes(32));
      const mine = isOnCurve(bytes);
      expect(mine).toBe(!isOffCurveAddress(addressDecoder.decode(bytes)));
      if (mine) on++;
    }
    expect(on).toBeGreaterThan(600);
    expect(on).toBeLessThan(900);
  });

  it("says real wallet keys are on the curve and PDAs are not", () => {
    expect(isOnCurve(bs58.decode("A59E2tNJEqNN9TDnzgGnmLmnTsdRDoPocGx3n1w2dqZw"))).toBe(true);
    expect(isOnCurve(bs58.decode("52J4tmbP9o3GHQrkts8vhXm84CLzM7KSXboKGnrw3YTW"))).toBe(false);
  });
});

describe("findProgramAddressSync", () => {
  it("derives what kit derives, bump included", async () => {
    const program = bs58.decode(TOKEN_METADATA_PROGRAM);
    for (let i = 0; i < 60; i++) {
      const seeds = [
        Buffer.from("metadata"),
        program,
        new Uint8Array(randomBytes(32)),
        new Uint8Array(randomBytes(i % 5)),
      ];
      const [key, bump] = findProgramAddressSync(seeds, program);
      const [kitAddress, kitBump] = await getProgramDerivedAddress({
        programAddress: TOKEN_METADATA_PROGRAM as Address,
        seeds,
      });
      expect(bs58.encode(key)).toBe(kitAddress);
      expect(bump).toBe(kitBump);
    }
  });

  it("finds the real fixtures where mainnet put them", () => {
    const accounts = loadRealAccounts();
    const metadata = accounts.filter((a) => a.owner === TOKEN_METADATA_PROGRAM);
    expect(metadata).toHaveLength(4);
    for (const account of metadata) {
      const decoded = decodeMetadata(account.data);
      const mint = bs58.decode(decoded.mint);
      expect(bs58.encode(metadataAddress(mint))).toBe(account.address);
      // edition_nonce is stored as the master edition PDA's bump
      expect(masterEditionAddress(mint)[1]).toBe(decoded.editionNonce);
    }
    const tokenAccounts = accounts.filter((a) => a.owner === TOKEN_PROGRAM && a.data.length === 165);
    expect(tokenAccounts).toHaveLength(4);
    for (const account of tokenAccounts) {
      const fields = decodeTokenAccount(account.data)!;
      expect(bs58.encode(associatedTokenAddress(fields.owner, fields.mint))).toBe(account.address);
    }
  });

  it("derives Bubblegum asset ids as kit does", async () => {
    const tree = new Uint8Array(randomBytes(32));
    const nonce = Buffer.alloc(8);
    nonce.writeBigUInt64LE(7n);
    const [expected] = await getProgramDerivedAddress({
      programAddress: "BGUMAp9Gq7iTEuizy4pqaxsTyUCBK68MDfK752saRPUY" as Address,
      seeds: [Buffer.from("asset"), tree, nonce],
    });
    expect(bs58.encode(compressedAssetId(tree, 7))).toBe(expected);
  });
});
