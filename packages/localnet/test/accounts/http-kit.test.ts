/**
 * The account methods end to end: a launched localnet (child process, port 0), real transactions
 * creating a mint and a token account, then reads over HTTP through @solana/kit's createSolanaRpc
 * (types and runtime) and raw JSON-RPC.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateKeyPairSigner, type Address, type KeyPairSigner } from "@solana/kit";
import { getCreateAccountInstruction } from "@solana-program/system";
import {
  getInitializeAccount3Instruction,
  getInitializeMint2Instruction,
  getMintToInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from "@solana-program/token";
import { fundedSigner, signedTransaction, startTestLocalnet, waitFor, type TestLocalnet } from "../helpers.ts";

let net: TestLocalnet;
let payer: KeyPairSigner;
let mint: KeyPairSigner;
let tokenAccount: KeyPairSigner;
const holder = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin" as Address;

beforeAll(async () => {
  net = await startTestLocalnet();
  payer = await fundedSigner(net);
  [mint, tokenAccount] = await Promise.all([generateKeyPairSigner(), generateKeyPairSigner()]);
  const { value: blockhash } = await net.rpc.getLatestBlockhash().send();
  const rentMint = await net.rpc.getMinimumBalanceForRentExemption(82n).send();
  const rentAccount = await net.rpc.getMinimumBalanceForRentExemption(165n).send();
  const tx = await signedTransaction(
    payer,
    [
      getCreateAccountInstruction({
        payer,
        newAccount: mint,
        lamports: rentMint,
        space: 82,
        programAddress: TOKEN_PROGRAM_ADDRESS,
      }),
      getInitializeMint2Instruction({ mint: mint.address, decimals: 6, mintAuthority: payer.address }),
      getCreateAccountInstruction({
        payer,
        newAccount: tokenAccount,
        lamports: rentAccount,
        space: 165,
        programAddress: TOKEN_PROGRAM_ADDRESS,
      }),
      getInitializeAccount3Instruction({ account: tokenAccount.address, mint: mint.address, owner: holder }),
      getMintToInstruction({
        mint: mint.address,
        token: tokenAccount.address,
        mintAuthority: payer,
        amount: 1_500_000n,
      }),
    ],
    blockhash,
  );
  await net.rpc.sendTransaction(tx.base64 as never, { encoding: "base64" }).send();
  await waitFor("token setup", async () => {
    const status = (await net.call("getSignatureStatuses", [[tx.signature]])).result.value[0];
    if (status?.err) throw new Error(`setup failed: ${JSON.stringify(status.err)}`);
    return status && status.confirmationStatus !== "processed" ? status : null;
  });
}, 60_000);

afterAll(async () => {
  await net?.stop();
});

describe("account methods through @solana/kit", () => {
  it("getAccountInfo / getMultipleAccounts / getBalance see what transactions wrote", async () => {
    const info = await net.rpc.getAccountInfo(tokenAccount.address, { encoding: "base64" }).send();
    expect(info.value?.owner).toBe(TOKEN_PROGRAM_ADDRESS);
    expect(info.value?.space).toBe(165n);
    // kit 8 no longer types rentEpoch, but still receives it (as agave sends it: u64::MAX).
    expect((info.value as unknown as { rentEpoch: bigint }).rentEpoch).toBe(18446744073709551615n);
    const bytes = Buffer.from(info.value!.data[0], "base64");
    expect(bytes.readBigUInt64LE(64)).toBe(1_500_000n);

    const parsed = await net.rpc.getAccountInfo(mint.address, { encoding: "jsonParsed" }).send();
    const data = parsed.value!.data as {
      program: string;
      parsed: { type: string; info: { supply: string; decimals: number } };
    };
    expect(data.program).toBe("spl-token");
    expect(data.parsed.info).toMatchObject({
      supply: "1500000",
      decimals: 6,
      mintAuthority: payer.address,
      isInitialized: true,
    });

    const many = await net.rpc.getMultipleAccounts([mint.address, holder, tokenAccount.address]).send();
    expect(many.value.map((v) => v?.owner ?? null)).toEqual([TOKEN_PROGRAM_ADDRESS, null, TOKEN_PROGRAM_ADDRESS]);
    expect((await net.rpc.getBalance(payer.address).send()).value).toBeGreaterThan(0n);
  });

  it("getProgramAccounts finds the token account by mint and by owner through the index", async () => {
    const byMint = await net.rpc
      .getProgramAccounts(TOKEN_PROGRAM_ADDRESS, {
        encoding: "jsonParsed",
        filters: [{ dataSize: 165n }, { memcmp: { offset: 0n, bytes: mint.address as never, encoding: "base58" } }],
      })
      .send();
    expect(byMint.map((k) => k.pubkey)).toEqual([tokenAccount.address]);
    const info = (byMint[0].account.data as { parsed: { info: Record<string, unknown> } }).parsed.info;
    expect(info).toMatchObject({
      owner: holder,
      state: "initialized",
      tokenAmount: { amount: "1500000", decimals: 6, uiAmount: 1.5, uiAmountString: "1.5" },
    });

    const byOwner = await net.rpc
      .getProgramAccounts(TOKEN_PROGRAM_ADDRESS, {
        encoding: "base64",
        withContext: true,
        filters: [{ dataSize: 165n }, { memcmp: { offset: 32n, bytes: holder as never, encoding: "base58" } }],
      })
      .send();
    expect(byOwner.value.map((k) => k.pubkey)).toEqual([tokenAccount.address]);
    expect(typeof byOwner.context.slot).toBe("bigint");
  });

  it("token methods answer for the new mint", async () => {
    const byOwner = await net.rpc
      .getTokenAccountsByOwner(holder, { mint: mint.address }, { encoding: "jsonParsed" })
      .send();
    expect(byOwner.value.map((k) => k.pubkey)).toEqual([tokenAccount.address]);
    expect((await net.rpc.getTokenAccountBalance(tokenAccount.address).send()).value).toEqual({
      amount: "1500000",
      decimals: 6,
      uiAmount: 1.5,
      uiAmountString: "1.5",
    });
    expect((await net.rpc.getTokenSupply(mint.address).send()).value.uiAmountString).toBe("1.5");
    const largest = await net.rpc.getTokenLargestAccounts(mint.address).send();
    expect(largest.value).toEqual([
      { address: tokenAccount.address, amount: "1500000", decimals: 6, uiAmount: 1.5, uiAmountString: "1.5" },
    ]);
  });

  it("speaks raw JSON-RPC: bare u64 numbers and agave's errors", async () => {
    const response = await net.post({
      jsonrpc: "2.0",
      id: 7,
      method: "getAccountInfo",
      params: [tokenAccount.address, { encoding: "base64" }],
    });
    expect(response.text).toContain('"rentEpoch":18446744073709551615');
    const refused = await net.call("getAccountInfo", [tokenAccount.address]);
    expect(refused.error).toEqual({
      code: -32600,
      message: "Encoded binary (base 58) data should be less than 128 bytes, please use Base64 encoding.",
    });
    const badKey = await net.call("getProgramAccounts", ["nope"]);
    expect(badKey.error).toEqual({ code: -32602, message: "Invalid param: WrongSize" });
    const tooMany = await net.call("getProgramAccounts", [
      TOKEN_PROGRAM_ADDRESS,
      { filters: Array(5).fill({ dataSize: 165 }) },
    ]);
    expect(tooMany.error).toEqual({ code: -32602, message: "Too many filters provided; max 4" });
  });
});
