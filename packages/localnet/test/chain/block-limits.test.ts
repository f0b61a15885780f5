/**
 * agave 4.4's block limits on the real localnet at its defaults (a child process through the launcher,
 * kit-built transfers over JSON-RPC): what solana-test-validator 4.4 packs with every feature active at
 * genesis. runtime/src/slot_params.rs: LEGACY_SLOT_PARAMS (60M per block, 24M per write-locked account)
 * x 100 / 60 for SIMD-0286, so 100,000,000 and 40,000,000; the four slot-time features activate at genesis
 * and take effect at the next epoch, where the 200 ms regime's 30M / 12M x 100 / 60 apply: 50,000,000 and
 * 20,000,000. Each transfer requests 1,400,000 CU: cost 720 + 2 x 300 + 17 data bytes / 4 + 1,400,000 +
 * 16,384 loaded data = 1,417,708 (figures written out from agave's constants).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { address, generateKeyPairSigner, type Address, type KeyPairSigner } from "@solana/kit";
import { getAllocateInstruction, getTransferSolInstruction } from "@solana-program/system";
import { getSetComputeUnitLimitInstruction } from "@solana-program/compute-budget";
import { signedTransaction, startTestLocalnet, waitFor, type TestLocalnet } from "../helpers.ts";

const COST = 720 + 600 + 4 + 1_400_000 + 16_384;
const VOTE_PROGRAM = address("Vote111111111111111111111111111111111111111");

interface Sent {
  signature: string;
  base64: string;
}

/** Airdrops to `n` new keys at once and waits until every airdrop is confirmed. */
async function fundedSigners(net: TestLocalnet, n: number): Promise<KeyPairSigner[]> {
  const signers = await Promise.all(Array.from({ length: n }, () => generateKeyPairSigner()));
  const signatures: string[] = [];
  for (const s of signers) signatures.push((await net.call("requestAirdrop", [s.address, 1_000_000_000n])).result);
  await waitFor(
    "airdrops confirmed",
    async () => {
      const r = await net.call("getSignatureStatuses", [signatures]);
      return (r.result.value as ({ confirmationStatus: string } | null)[]).every(
        (s) => s !== null && s.confirmationStatus !== "processed",
      );
    },
    30_000,
  );
  return signers;
}

/** One 1,400,000-CU transfer per payer, to `to(i)`. */
async function transfers(net: TestLocalnet, payers: KeyPairSigner[], to: (i: number) => Address): Promise<Sent[]> {
  const bh = (await net.rpc.getLatestBlockhash({ commitment: "processed" }).send()).value;
  return Promise.all(
    payers.map((payer, i) =>
      signedTransaction(
        payer,
        [
          getSetComputeUnitLimitInstruction({ units: 1_400_000 }),
          getTransferSolInstruction({ source: payer, destination: to(i), amount: 1_000_000n }),
        ],
        bh,
      ),
    ),
  );
}

/** Sends all while block production is frozen, waits until all landed, and returns how many the first block took. */
async function firstBlockTakes(net: TestLocalnet, txs: readonly Sent[]): Promise<number> {
  await net.handle.control({ freeze: true });
  try {
    for (const tx of txs) {
      const r = await net.call("sendTransaction", [tx.base64, { encoding: "base64", skipPreflight: true }]);
      expect(r.error).toBeUndefined();
    }
  } finally {
    await net.handle.control({ freeze: false });
  }
  const slots = await waitFor(
    "all landed",
    async () => {
      const r = await net.call("getSignatureStatuses", [txs.map((t) => t.signature)]);
      const found = r.result.value as ({ slot: number } | null)[];
      return found.every((s) => s !== null) ? found.map((s) => s!.slot) : null;
    },
    30_000,
  );
  const first = Math.min(...slots);
  return slots.filter((s) => s === first).length;
}

const newAddress = async () => (await generateKeyPairSigner()).address;

describe("agave 4.4's limits in epoch 0 (SIMD-0286: 100M per block, 40M per account)", () => {
  let net: TestLocalnet;
  beforeAll(async () => {
    net = await startTestLocalnet({ slotMs: 50 });
  });
  afterAll(async () => {
    await net?.stop();
  });

  it("reports them in localnet_status", async () => {
    const { lastBlock } = (await net.call("localnet_status")).result;
    expect([lastBlock.blockCostLimit, lastBlock.accountCostLimit]).toEqual([100_000_000, 40_000_000]);
  });

  it("packs 50 transfers of 1,417,708 CU (70.9M, over 3.0's 60M) into one block", async () => {
    const payers = await fundedSigners(net, 50);
    const destinations = await Promise.all(payers.map(newAddress));
    expect(await firstBlockTakes(net, await transfers(net, payers, (i) => destinations[i]!))).toBe(50);
  });

  it("lets one account take 28 of them (39.7M; 3.0's 24M took 16), the 29th waits", async () => {
    const payers = await fundedSigners(net, 30);
    const hot = await newAddress();
    expect(Math.floor(40_000_000 / COST)).toBe(28);
    expect(await firstBlockTakes(net, await transfers(net, payers, () => hot))).toBe(28);
  });
});

describe("agave 4.4's limits from epoch 1 (the 200 ms regime: 50M per block, 20M per account)", () => {
  let net: TestLocalnet;
  beforeAll(async () => {
    // Epoch 1 starts at slot 32: the slot-time features activated at genesis take effect there.
    net = await startTestLocalnet({ slotMs: 20, slotsPerEpoch: 32 });
    await waitFor(
      "epoch 1",
      async () => (await net.call("getEpochInfo", [{ commitment: "processed" }])).result.epoch >= 1,
    );
  });
  afterAll(async () => {
    await net?.stop();
  });

  it("reports them in localnet_status", async () => {
    const { lastBlock } = (await net.call("localnet_status")).result;
    expect(lastBlock.slot).toBeGreaterThanOrEqual(32);
    expect([lastBlock.blockCostLimit, lastBlock.accountCostLimit]).toEqual([50_000_000, 20_000_000]);
  });

  it("takes 35 of 40 transfers (49.6M) into one block", async () => {
    const payers = await fundedSigners(net, 40);
    const destinations = await Promise.all(payers.map(newAddress));
    expect(Math.floor(50_000_000 / COST)).toBe(35);
    expect(await firstBlockTakes(net, await transfers(net, payers, (i) => destinations[i]!))).toBe(35);
  });

  it("lets one account take 14 (19.8M; 3.0's 24M took 16)", async () => {
    const payers = await fundedSigners(net, 20);
    const hot = await newAddress();
    expect(await firstBlockTakes(net, await transfers(net, payers, () => hot))).toBe(14);
  });
});

describe("agave 4.4's cost of a Vote instruction (no longer a builtin with SIMD-0387)", () => {
  let net: TestLocalnet;
  beforeAll(async () => {
    net = await startTestLocalnet({ slotMs: 50, blockCostLimit: 250_000, accountCostLimit: 250_000 });
  });
  afterAll(async () => {
    await net?.stop();
  });

  it("requests 200,000 CU by default (3.0: 3,000), so one per 250,000-CU block", async () => {
    // 720 + 300 (the payer) + 4 data bytes / 4 + 200,000 + 16,384 = 217,405 (3.0: 20,405, all five in one block).
    // The instruction fails (no accounts), but its fee is charged, so it is committed and counts.
    const payers = await fundedSigners(net, 5);
    const bh = (await net.rpc.getLatestBlockhash({ commitment: "processed" }).send()).value;
    const votes = await Promise.all(
      payers.map((payer) =>
        signedTransaction(payer, [{ programAddress: VOTE_PROGRAM, data: new Uint8Array([255, 255, 255, 255]) }], bh),
      ),
    );
    expect(await firstBlockTakes(net, votes)).toBe(1);
  });
});

describe("agave 4.4's accounts-data growth limit (100 MB a block in epoch 0, 50 MB from epoch 1)", () => {
  /** `n` transactions of one payer, each allocating 10 MiB (MAX_PERMITTED_DATA_LENGTH) to a new account. */
  async function allocations(net: TestLocalnet, n: number): Promise<Sent[]> {
    const [payer] = await fundedSigners(net, 1);
    const bh = (await net.rpc.getLatestBlockhash({ commitment: "processed" }).send()).value;
    return Promise.all(
      Array.from({ length: n }, async () => {
        const account = await generateKeyPairSigner();
        return signedTransaction(
          payer!,
          [getAllocateInstruction({ newAccount: account, space: 10n * 1024n * 1024n })],
          bh,
        );
      }),
    );
  }

  it("takes 9 allocations of 10 MiB (94.4 MB) into an epoch-0 block, 4 (41.9 MB) into an epoch-1 block", async () => {
    // cost_model.rs calculate_allocated_accounts_data_size; cost_tracker.rs try_add checks the block's sum
    // against slot_params.rs' 100,000,000 bytes (400 ms, not scaled by SIMD-0286) and 50,000,000 at 200 ms.
    const epoch0 = await startTestLocalnet({ slotMs: 50 });
    try {
      expect(await firstBlockTakes(epoch0, await allocations(epoch0, 12))).toBe(9);
    } finally {
      await epoch0.stop();
    }
    const epoch1 = await startTestLocalnet({ slotMs: 20, slotsPerEpoch: 32 });
    try {
      await waitFor(
        "epoch 1",
        async () => (await epoch1.call("getEpochInfo", [{ commitment: "processed" }])).result.epoch >= 1,
      );
      expect(await firstBlockTakes(epoch1, await allocations(epoch1, 6))).toBe(4);
    } finally {
      await epoch1.stop();
    }
  });
});
