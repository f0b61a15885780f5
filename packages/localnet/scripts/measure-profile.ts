/**
 * Runs the localnet with a traffic profile at its default limits (or the caller's LOCALNET_* variables) and
 * prints, over `seconds` after a 5 s warm-up, what its blocks did: slots and included transactions per
 * second, the mean fill of the block limit and of the busiest account's limit, the buffer at the end, and
 * how many transactions expired or were evicted. The scale figures in README.md come from it:
 * `node packages/localnet/scripts/measure-profile.ts storm 30`.
 */
import { startLocalnet } from "../src/launcher.ts";
import type { TrafficProfile } from "../src/traffic/traffic-options.ts";

const profile = (process.argv[2] ?? "congested") as TrafficProfile;
const seconds = Number(process.argv[3] ?? 30);
const net = await startLocalnet({ traffic: { profile }, world: false });
/** The fields of localnet_status read here. */
interface Status {
  processedSlot: number;
  transactionCount: number;
  queued: number;
  expired: number;
  evicted: number;
  lastBlock: {
    slot: number;
    cost: number;
    blockCostLimit: number;
    accountCostLimit: number;
    busiestAccount: { cost: number } | null;
  };
}
const call = async (method: string): Promise<Status> => {
  const response = await fetch(net.rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: [] }),
  });
  return ((await response.json()) as { result: Status }).result;
};
try {
  await new Promise((r) => setTimeout(r, 5_000));
  const first = await call("localnet_status");
  const started = Date.now();
  const blockFill: number[] = [];
  const accountFill: number[] = [];
  let lastSlot = -1;
  while (Date.now() - started < seconds * 1_000) {
    const { lastBlock } = await call("localnet_status");
    if (lastBlock.slot !== lastSlot) {
      lastSlot = lastBlock.slot;
      blockFill.push(lastBlock.cost / lastBlock.blockCostLimit);
      accountFill.push((lastBlock.busiestAccount?.cost ?? 0) / lastBlock.accountCostLimit);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const last = await call("localnet_status");
  const elapsed = (Date.now() - started) / 1_000;
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  console.log(
    JSON.stringify({
      profile,
      seconds: elapsed,
      slotsPerSecond: +((last.processedSlot - first.processedSlot) / elapsed).toFixed(2),
      includedPerSecond: Math.round((last.transactionCount - first.transactionCount) / elapsed),
      meanBlockFill: +mean(blockFill).toFixed(3),
      meanBusiestAccountFill: +mean(accountFill).toFixed(3),
      bufferedAtEnd: last.queued,
      expired: last.expired - first.expired,
      evicted: last.evicted - first.evicted,
    }),
  );
} finally {
  await net.stop();
}
