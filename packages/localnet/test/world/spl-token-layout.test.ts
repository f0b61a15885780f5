/**
 * Fixed-offset mint and token account layouts against @solana-program/token's decoders, on the
 * real mainnet accounts of the fixtures and on generated ones.
 */
import { describe, expect, it } from "vitest";
import bs58 from "bs58";
import { AccountState, getMintDecoder, getTokenDecoder } from "@solana-program/token";
import { isSome } from "@solana/kit";
import { loadRealAccounts } from "../../src/world/real-fixtures.ts";
import { TOKEN_PROGRAM } from "../../src/world/program-ids.ts";
import {
  decodeMint,
  decodeTokenAccount,
  encodeMint,
  encodeTokenAccount,
  MINT_SIZE,
  TOKEN_ACCOUNT_SIZE,
  TokenAccountState,
} from "../../src/world/spl-token-layout.ts";

const key = (n: number) => Uint8Array.from({ length: 32 }, (_, i) => (i * 7 + n) % 256);
const optional = <T>(o: { __option: string; value?: T }) => (isSome(o as never) ? (o as { value: T }).value : null);

describe("SPL Token layouts", () => {
  const real = loadRealAccounts().filter((a) => a.owner === TOKEN_PROGRAM);

  it("reads the real mints as @solana-program/token does", () => {
    const mints = real.filter((a) => a.data.length === MINT_SIZE);
    expect(mints).toHaveLength(4);
    for (const account of mints) {
      const mine = decodeMint(account.data)!;
      const theirs = getMintDecoder().decode(account.data);
      expect(mine.supply).toBe(theirs.supply);
      expect(mine.supply).toBe(1n);
      expect(mine.decimals).toBe(theirs.decimals);
      expect(bs58.encode(mine.mintAuthority!)).toBe(optional(theirs.mintAuthority));
      expect(bs58.encode(mine.freezeAuthority!)).toBe(optional(theirs.freezeAuthority));
      expect(Buffer.from(encodeMint(mine)).equals(Buffer.from(account.data))).toBe(true);
    }
  });

  it("reads the real token accounts (frozen pNFT holdings, one delegated) as @solana-program/token does", () => {
    const accounts = real.filter((a) => a.data.length === TOKEN_ACCOUNT_SIZE);
    expect(accounts).toHaveLength(4);
    for (const account of accounts) {
      const mine = decodeTokenAccount(account.data)!;
      const theirs = getTokenDecoder().decode(account.data);
      expect(bs58.encode(mine.mint)).toBe(theirs.mint);
      expect(bs58.encode(mine.owner)).toBe(theirs.owner);
      expect(mine.amount).toBe(theirs.amount);
      expect(mine.state).toBe(theirs.state);
      expect(mine.state).toBe(TokenAccountState.Frozen);
      expect(mine.delegate === null ? null : bs58.encode(mine.delegate)).toBe(optional(theirs.delegate));
      expect(mine.delegatedAmount).toBe(theirs.delegatedAmount);
      expect(Buffer.from(encodeTokenAccount(mine)).equals(Buffer.from(account.data))).toBe(true);
    }
    // Mad Lads #9964 is delegated (to a marketplace program): the delegate must come through.
    const madLads = decodeTokenAccount(
      accounts.find((a) => a.address === "Fc1MSqW3eifoMuDupvimtu2DbSYmGUtSQ7wBUoz87uK5")!.data,
    )!;
    expect(bs58.encode(madLads.delegate!)).toBe("GBkD9WsmSPNBF7bnFxyC4BCC2ZiBzYq9iWStPZ9Kj9cU");
    expect(madLads.delegatedAmount).toBe(1n);
  });

  it("writes accounts @solana-program/token reads back", () => {
    const bytes = encodeTokenAccount({
      mint: key(1),
      owner: key(2),
      amount: 18_446_744_073_709_551_615n,
      delegate: key(3),
      state: TokenAccountState.Initialized,
      delegatedAmount: 5n,
      closeAuthority: key(4),
    });
    const theirs = getTokenDecoder().decode(bytes);
    expect(theirs.amount).toBe(18_446_744_073_709_551_615n);
    expect(theirs.state).toBe(AccountState.Initialized);
    expect(optional(theirs.delegate)).toBe(bs58.encode(key(3)));
    expect(optional(theirs.closeAuthority)).toBe(bs58.encode(key(4)));
    expect(optional(theirs.isNative)).toBeNull();
    const mint = getMintDecoder().decode(
      encodeMint({ mintAuthority: null, supply: 42n, decimals: 9, freezeAuthority: key(5) }),
    );
    expect(mint.isInitialized).toBe(true);
    expect(optional(mint.mintAuthority)).toBeNull();
    expect(mint.supply).toBe(42n);
    expect(optional(mint.freezeAuthority)).toBe(bs58.encode(key(5)));
  });

  it("refuses what is not an initialized account of the right size", () => {
    expect(decodeMint(new Uint8Array(MINT_SIZE))).toBeNull();
    expect(decodeMint(new Uint8Array(81))).toBeNull();
    expect(decodeTokenAccount(new Uint8Array(TOKEN_ACCOUNT_SIZE))).toBeNull();
    const bad = new Uint8Array(TOKEN_ACCOUNT_SIZE);
    bad[108] = 3;
    expect(decodeTokenAccount(bad)).toBeNull();
  });
});
