/**
 * The climb on a congested market: the real localnet under its `storm` traffic (blocks full, a hot account bid
 * up), the real fee market and transactions core. A ladder into the hot account whose bottom rungs cannot land
 * there climbs, by the odds, to a rung that does: exactly one rung on chain, and it is not the first.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Address } from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import { parseTrafficConfig, planTraffic } from "@solgate/localnet/testing";
import { createFeeMarket } from "../../../src/fees/fee-market.ts";
import type { FeeMarket } from "../../../src/fees/fee-market.ts";
import { createTransactions } from "../../../src/transactions/transactions.ts";
import type { Transactions } from "../../../src/transactions/transactions.ts";
import { startChainFixture } from "../chain-fixture.ts";
import type { ChainFixture } from "../chain-fixture.ts";
import { createNonceAccount, handRungs, nonceValue, onChain, waitFor } from "./ladder-fixture.ts";

const PROFILE = "storm";
let chain: ChainFixture;
let fees: FeeMarket;
let core: Transactions;
let hot: Address;

beforeAll(async () => {
  chain = await startChainFixture({ slotMs: 100, traffic: { profile: PROFILE } });
  hot = planTraffic(parseTrafficConfig({ LOCALNET_TRAFFIC: PROFILE }).options).hot[0] as Address;
  fees = createFeeMarket({ upstream: chain.upstream, pollIntervalMs: 50 });
  fees.start();
  core = createTransactions({ upstream: chain.upstream, fees, pollIntervalMs: 50, rebroadcastIntervalMs: 300 });
  core.start();
}, 60_000);

afterAll(async () => {
  core?.stop();
  await fees?.stop();
  await chain?.stop();
});

describe("the climb", () => {
  it("climbs past rungs the hot account refuses and lands one rung only", async () => {
    const payer = await chain.funded(10);
    const nonce = await createNonceAccount(chain, payer);
    const value = await nonceValue(chain, nonce);
    const transfer = getTransferSolInstruction({ source: payer, destination: hot, amount: 1_000_000n });
    // The market's own price for these accounts, once the odds can be read (32 blocks).
    const [probe] = await handRungs(payer, nonce, value, [1n], [transfer]);
    await waitFor(
      () => fees.oddsForTransaction(probe, 4),
      (odds) => odds !== undefined,
      30_000,
    );
    const recommended = fees.priceFor("auto", [payer.address, hot]) ?? 1_000_000n;
    const rungs = await handRungs(payer, nonce, value, [1n, 2n, recommended * 20n + 1_000n], [transfer]);
    const taken = await core.ladders.send({ wires: rungs, deadlineSlots: 24, target: 0.9 });
    const ended = await waitFor(
      () => core.ladders.status(taken.id),
      (ladder) => ["confirmed", "finalized", "failed", "expired", "nonce_advanced"].includes(ladder.state),
      40_000,
    );
    const submitted = ended.rungs.filter((rung) => rung.submittedSlot !== undefined).length;
    process.stderr.write(
      `[ladder-climb] ${PROFILE}: recommended ${recommended}, state ${ended.state}, landed rung ${ended.landedRung}, rungs submitted ${submitted}, slots to land ${ended.slot === undefined ? "-" : ended.slot - ended.firstSlot}\n`,
    );
    expect(["confirmed", "finalized"]).toContain(ended.state);
    expect(ended.landedRung).toBeGreaterThanOrEqual(1);
    expect(submitted).toBeGreaterThanOrEqual(2);
    expect(
      await onChain(
        chain,
        rungs.map((wire) => ended.rungs[rungs.indexOf(wire)].signature),
      ),
    ).toBe(1);
  }, 60_000);
});
