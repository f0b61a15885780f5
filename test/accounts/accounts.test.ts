/**
 * GetAccount's core over a seeded localnet: each kind of account it meets decoded as the node
 * parses it (checked against the account's own bytes), Token Metadata by Solgate's decoder, and the
 * two errors.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { address } from "@solana/kit";
import { createAccounts } from "../../src/accounts/accounts.ts";
import type { Accounts } from "../../src/accounts/accounts.ts";
import { metadataAddress } from "../../src/collections/token-metadata.ts";
import { SolgateError } from "../../src/errors.ts";
import { TOKEN_METADATA_PROGRAM, TOKEN_PROGRAM } from "../../src/solana/program-ids.ts";
import { createUpstream } from "../../src/upstream/upstream.ts";
import type { Upstream } from "../../src/upstream/upstream.ts";
import { startSeededLocalnet } from "../programs/localnet-world.ts";
import type { SeededLocalnet } from "../programs/localnet-world.ts";

let world: SeededLocalnet;
let upstream: Upstream;
let accounts: Accounts;

beforeAll(async () => {
  world = await startSeededLocalnet({ tokenHolders: 50, smallHolders: 5 });
  upstream = createUpstream({ chain: "localnet", rpcUrls: [world.localnet.rpcUrl] });
  accounts = createAccounts({ upstream });
});
afterAll(async () => {
  await upstream?.close();
  await world?.stop();
});

async function bytesOf(at: string): Promise<Buffer> {
  const { value } = await upstream.rpc.getAccountInfo(address(at), { encoding: "base64" }).send();
  return Buffer.from(value!.data[0], "base64");
}

async function rejection(promise: Promise<unknown>): Promise<SolgateError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof SolgateError) return error;
    throw error;
  }
  throw new Error("did not fail");
}

describe("GetAccount's core", () => {
  it("gives a wallet's balance, owner and empty data", async () => {
    const demo = world.manifest.demoWallet;
    const account = await accounts.get(demo.address);
    expect(account).toEqual({
      address: demo.address,
      lamports: BigInt(demo.lamports),
      sol: Number(BigInt(demo.lamports)) / 1e9,
      space: 0n,
      owner: "11111111111111111111111111111111",
      executable: false,
      data: { format: "base64", base64: "" },
    });
  });

  it("gives a mint parsed, its decimals and supply those of its bytes", async () => {
    const gate = world.manifest.fungibleMints[0];
    const account = await accounts.get(gate.mint);
    const bytes = await bytesOf(gate.mint);
    expect(account.owner).toBe(TOKEN_PROGRAM);
    expect(account.space).toBe(82n);
    expect(account.data).toMatchObject({ format: "parsed", program: "spl-token", parsed: { type: "mint" } });
    if (account.data.format !== "parsed" || !("fields" in account.data.parsed)) throw new Error("not parsed");
    expect(account.data.parsed.fields).toMatchObject({
      decimals: gate.decimals,
      isInitialized: true,
      supply: bytes.readBigUInt64LE(36).toString(),
    });
    expect(account.data.parsed.fields.supply).toBe(gate.supply);
  });

  it("gives a token account in the typed shape program-account items use", async () => {
    const held = world.manifest.demoWallet.tokenAccounts[0];
    const account = await accounts.get(held);
    const bytes = await bytesOf(held);
    expect(account.data).toMatchObject({ format: "parsed", program: "spl-token", parsed: { type: "account" } });
    if (account.data.format !== "parsed" || !("info" in account.data.parsed)) throw new Error("not a token account");
    expect(account.data.parsed.info.owner).toBe(world.manifest.demoWallet.address);
    expect(account.data.parsed.info.tokenAmount.raw).toBe(bytes.readBigUInt64LE(64));
  });

  it("decodes a Token Metadata account, which nodes leave as base64", async () => {
    const nft = world.manifest.demoWallet.nfts[0];
    const pda = await metadataAddress(address(nft));
    const account = await accounts.get(pda);
    expect(account.owner).toBe(TOKEN_METADATA_PROGRAM);
    expect(account.data).toMatchObject({
      format: "parsed",
      program: "token-metadata",
      parsed: { type: "metadata", fields: { mint: nft } },
    });
    if (account.data.format !== "parsed" || !("fields" in account.data.parsed)) throw new Error("not parsed");
    expect(account.data.parsed.fields.name).toMatch(/\S/);
    expect(account.data.parsed.fields.collection).toMatchObject({ verified: true });
  });

  it("gives a sysvar as the node parses it, and an executable program as such", async () => {
    const clock = await accounts.get("SysvarC1ock11111111111111111111111111111111");
    expect(clock.data).toMatchObject({ format: "parsed", program: "sysvar", parsed: { type: "clock" } });
    const token = await accounts.get(TOKEN_PROGRAM);
    expect(token.executable).toBe(true);
  });

  it("answers NOT_FOUND for an empty address and INVALID_ADDRESS for a malformed one", async () => {
    expect((await rejection(accounts.get("11111111111111111111111111111112"))).reason).toBe("NOT_FOUND");
    const bad = await rejection(accounts.get("not-an-address"));
    expect(bad.reason).toBe("INVALID_ADDRESS");
    expect(bad.details.field).toBe("address");
  });
});
