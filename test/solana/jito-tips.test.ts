import { describe, expect, it } from "vitest";
import { address, generateKeyPairSigner } from "@solana/kit";
import {
  getAssignInstruction,
  getTransferSolInstruction,
  getTransferSolWithSeedInstruction,
} from "@solana-program/system";
import { transferDestinationPosition, transferLamports } from "../../src/solana/jito-tips.ts";

const tipAccount = address("HFqU5x63VTqvQss8hp11i4wVV8bD44PvwucfZ2bU7gRe");

describe("the tip predicate (the localnet's definition: Transfer and TransferWithSeed)", () => {
  it("reads a Transfer's destination (second account) and lamports from kit's encoding", async () => {
    const payer = await generateKeyPairSigner();
    const ix = getTransferSolInstruction({ source: payer, destination: tipAccount, amount: 5_000n });
    const data = Uint8Array.from(ix.data);
    const position = transferDestinationPosition(data, 0, data.length, ix.accounts.length);
    expect(position).toBe(1);
    expect(ix.accounts[position]!.address).toBe(tipAccount);
    expect(transferLamports(data, 0)).toBe(5_000n);
  });

  it("reads a TransferWithSeed's destination (third account) and lamports, as the localnet counts it", async () => {
    const base = await generateKeyPairSigner();
    const source = (await generateKeyPairSigner()).address;
    const ix = getTransferSolWithSeedInstruction({
      source,
      baseAccount: base,
      destination: tipAccount,
      amount: 7_000n,
      fromSeed: "tips",
      fromOwner: address("11111111111111111111111111111111"),
    });
    const data = Uint8Array.from(ix.data);
    const position = transferDestinationPosition(data, 0, data.length, ix.accounts.length);
    expect(position).toBe(2);
    expect(ix.accounts[position]!.address).toBe(tipAccount);
    expect(transferLamports(data, 0)).toBe(7_000n);
  });

  it("refuses other System instructions, short data and too few accounts, also at an offset in a larger buffer", async () => {
    const payer = await generateKeyPairSigner();
    const assign = getAssignInstruction({ account: payer, programAddress: tipAccount });
    expect(transferDestinationPosition(Uint8Array.from(assign.data), 0, assign.data.length, 1)).toBe(-1);
    const transfer = Uint8Array.from(
      getTransferSolInstruction({ source: payer, destination: tipAccount, amount: 9n }).data,
    );
    expect(transferDestinationPosition(transfer, 0, 11, 2)).toBe(-1);
    expect(transferDestinationPosition(transfer, 0, 12, 1)).toBe(-1);
    const wider = new Uint8Array(40);
    wider.set(transfer, 17);
    expect(transferDestinationPosition(wider, 17, 12, 2)).toBe(1);
    expect(transferLamports(wider, 17)).toBe(9n);
  });
});
