/**
 * simulateTransaction's `accounts` with `jsonParsed`: each account encoded as getAccountInfo encodes
 * it, its address included, so the parsers that need the address (vote, sysvars) parse; base64 only
 * where no parser applies (a System account without data).
 */
import { generateKeyPairSigner, type Address } from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fundedSigner, signedTransaction, startTestLocalnet, type TestLocalnet } from "../helpers.ts";

const CLOCK = "SysvarC1ock11111111111111111111111111111111";
const RENT = "SysvarRent111111111111111111111111111111111";

describe("simulateTransaction accounts as jsonParsed", () => {
  let net: TestLocalnet;
  beforeAll(async () => {
    net = await startTestLocalnet();
  }, 60_000);
  afterAll(() => net?.stop());

  it("parses vote and sysvar accounts, as getAccountInfo does", async () => {
    const payer = await fundedSigner(net);
    const to = await generateKeyPairSigner();
    const vote = (await net.call("getVoteAccounts", [{ commitment: "processed" }])).result.current[0].votePubkey;
    const { value: bh } = await net.rpc.getLatestBlockhash({ commitment: "processed" }).send();
    const tx = await signedTransaction(
      payer,
      [getTransferSolInstruction({ source: payer, destination: to.address as Address, amount: 1_000_000n })],
      bh,
    );
    const addresses = [vote, RENT, payer.address];
    const { result } = await net.call("simulateTransaction", [
      tx.base64,
      { encoding: "base64", commitment: "processed", accounts: { addresses, encoding: "jsonParsed" } },
    ]);
    expect(result.value.err).toBeNull();
    const [voteAccount, rent, payerAccount] = result.value.accounts;
    expect(voteAccount.data.program).toBe("vote");
    expect(voteAccount.data.parsed.type).toBe("vote");
    expect(voteAccount.data.parsed.info.nodePubkey).toBe((await net.call("getIdentity")).result.identity);
    const rentInfo = (await net.call("getAccountInfo", [RENT, { encoding: "jsonParsed" }])).result.value;
    expect(rent).toEqual(rentInfo);
    expect(payerAccount.data).toEqual(["", "base64"]);
    // The Clock needs its address too, and is among the accounts a simulation may read.
    const clock = await net.call("simulateTransaction", [
      tx.base64,
      { encoding: "base64", commitment: "processed", accounts: { addresses: [CLOCK], encoding: "jsonParsed" } },
    ]);
    expect(clock.result.value.accounts[0].data).toMatchObject({ program: "sysvar", parsed: { type: "clock" } });
  });
});
