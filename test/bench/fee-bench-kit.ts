/**
 * What the fee benches share (fee-calibration-bench.ts, ladder-bench.ts): a localnet with a traffic profile and a
 * Solgate process pointed at it, driven from outside over REST; the percentiles of getRecentPrioritizationFees users
 * take today; and the hindsight-cheapest fee that landed 90%.
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { createSolanaRpc } from "@solana/kit";
import type { Address, Rpc, SolanaRpcApi } from "@solana/kit";
import { startLocalnet } from "@solgate/localnet";
import { parseTrafficConfig, planTraffic } from "@solgate/localnet/testing";

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Deterministic uniform numbers (mulberry32), so that a run can be repeated. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const byValue = (a: bigint, b: bigint) => (a < b ? -1 : a > b ? 1 : 0);

/** The median (the upper one of an even count); 0 for none. */
export function median(values: readonly bigint[]): bigint {
  if (values.length === 0) return 0n;
  const sorted = [...values].sort(byValue);
  return sorted[Math.floor(sorted.length / 2)];
}

/** The p-th percentile (0-100, nearest rank); undefined for none. */
export function percentile(values: readonly bigint[], p: number): bigint | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort(byValue);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p * sorted.length) / 100) - 1))];
}

/** A localnet with traffic and a Solgate process in front of it. */
export interface FeeStack {
  /** The localnet's JSON-RPC URL (also its control methods). */
  rpcUrl: string;
  rpc: Rpc<SolanaRpcApi>;
  /** Solgate's REST base for the chain, `http://127.0.0.1:<port>/v1/mainnet`. */
  base: string;
  /** Authorization and content type for Solgate's REST calls. */
  headers: Record<string, string>;
  /** The traffic's first hot account (undefined when the profile has none). */
  hotAccount: Address | undefined;
  /** Calls one of the localnet's control methods. */
  control(method: string, params: unknown[]): Promise<unknown>;
  stop(): Promise<void>;
}

export interface FeeStackOptions {
  /** LOCALNET_TRAFFIC. */
  profile: string;
  /** The localnet's environment on top of the traffic's (e.g. LOCALNET_PROGRAMS). */
  localnetEnv?: Record<string, string>;
  /** Solgate's environment on top of what the stack sets (e.g. SOLGATE_FEES_TARGET). */
  env?: Record<string, string>;
  /** Solgate's entry point and arguments (default src/main.ts). */
  entry?: string[];
  log: (line: string) => void;
}

const KEY = "fee-bench";
/** Mainnet's block limit since SIMD-0256; the benches' default (see startFeeStack). */
const BENCH_BLOCK_CU_LIMIT = "60000000";

/**
 * Starts the localnet with `profile` traffic (its own process, no world) and Solgate (src/main.ts, another process)
 * pointed at it, and waits until Solgate quotes landing odds (it needs ~32 blocks).
 */
export async function startFeeStack(options: FeeStackOptions): Promise<FeeStack> {
  // The benches run at mainnet's limits (60M / 24M, SIMD-0256) unless LOCALNET_BLOCK_CU_LIMIT says otherwise: the
  // localnet's own default is solana-test-validator 4.4's 100M / 40M, whose profiles send 5/3 as many transactions
  // a slot, which a 2-core machine cannot pack in 400 ms (docs/benchmarks.md, "Fee benches and block limits").
  const blockCostLimit = BigInt(process.env.LOCALNET_BLOCK_CU_LIMIT ?? BENCH_BLOCK_CU_LIMIT);
  const accountCostLimit = BigInt(process.env.LOCALNET_ACCOUNT_CU_LIMIT ?? (blockCostLimit * 2n) / 5n);
  const trafficEnv = {
    LOCALNET_TRAFFIC: options.profile,
    LOCALNET_BLOCK_CU_LIMIT: String(blockCostLimit),
    LOCALNET_ACCOUNT_CU_LIMIT: String(accountCostLimit),
  };
  Object.assign(process.env, trafficEnv, options.localnetEnv);
  const localnet = await startLocalnet({ world: false });
  const rpc = createSolanaRpc(localnet.rpcUrl) as Rpc<SolanaRpcApi>;
  let hotAccount: Address | undefined;
  try {
    hotAccount = planTraffic(parseTrafficConfig(trafficEnv, true, { blockCostLimit, accountCostLimit }).options)
      .hot[0] as Address | undefined;
  } catch {
    hotAccount = undefined;
  }
  // Solgate assumes the chain's limits (docs/landing-odds.md "The limits are assumed, not read"): give it the
  // localnet's, as the localnet reports them.
  const { lastBlock } = (await localnet.status()) as {
    lastBlock: { blockCostLimit: number; accountCostLimit: number };
  };
  const port = await freePort();
  const solgate: ChildProcess = spawn(process.execPath, options.entry ?? ["src/main.ts"], {
    cwd: new URL("../../", import.meta.url),
    env: {
      // The localnet's variables are the localnet's: Solgate's own config would read (and judge) them.
      ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("LOCALNET_"))),
      NODE_ENV: "development",
      SOLGATE_RPC_URL: localnet.rpcUrl,
      SOLGATE_API_KEYS: KEY,
      PORT: String(port),
      METRICS_PORT: "0",
      LOG_LEVEL: "error",
      SOLGATE_FEES_BLOCK_CU_LIMIT: String(lastBlock.blockCostLimit),
      SOLGATE_FEES_ACCOUNT_CU_LIMIT: String(lastBlock.accountCostLimit),
      ...options.env,
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  let exited = false;
  const killSolgate = () => solgate.kill("SIGTERM");
  process.once("exit", killSolgate);
  solgate.once("exit", () => {
    exited = true;
  });
  const base = `http://127.0.0.1:${port}/v1/mainnet`;
  const headers = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };
  const stop = async () => {
    solgate.kill("SIGTERM");
    process.removeListener("exit", killSolgate);
    await localnet.stop();
  };
  try {
    const deadline = Date.now() + 180_000;
    for (;;) {
      const ok = await fetch(`${base}/network/fees`, { headers })
        .then(async (r) => (r.ok ? ((await r.json()) as { priority?: { odds?: unknown } }) : undefined))
        .catch(() => undefined);
      if (ok?.priority?.odds) break;
      if (exited) throw new Error("Solgate exited before quoting odds");
      if (Date.now() > deadline) throw new Error("Solgate gave no odds within 180 s");
      await sleep(500);
    }
  } catch (error) {
    await stop();
    throw error;
  }
  let id = 0;
  return {
    rpcUrl: localnet.rpcUrl,
    rpc,
    base,
    headers,
    hotAccount,
    async control(method, params) {
      const res = await fetch(localnet.rpcUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: ++id, method, params }),
      });
      const body = (await res.json()) as { result?: unknown; error?: { message: string } };
      if (body.error) throw new Error(`${method}: ${body.error.message}`);
      return body.result;
    },
    stop,
  };
}

/**
 * What users take today: percentiles of getRecentPrioritizationFees (150 slots) for `accounts` (none: the whole
 * block's market).
 */
export async function recentFeePercentiles(
  rpc: Rpc<SolanaRpcApi>,
  accounts: Address[],
): Promise<{ p50: bigint; p75: bigint; max: bigint } | undefined> {
  const fees = await rpc.getRecentPrioritizationFees(accounts).send();
  if (fees.length === 0) return undefined;
  const values = fees.map((f) => f.prioritizationFee);
  return { p50: percentile(values, 50)!, p75: percentile(values, 75)!, max: percentile(values, 100)! };
}

/** One send for the hindsight figure: its price and whether it landed within the frame that is scored. */
export interface PricedOutcome {
  price: bigint;
  landed: boolean;
}

/**
 * Hindsight: the cheapest fee that landed >= `share` (default 90%), read off a monotone fit of landing on the fee
 * (pool adjacent violators over the sends grouped by fee, equal fees always together, and adjacent groups with
 * equal shares pooled too, so that 40 sends at 40 different fees that all landed make one group): the lowest fee of
 * the first pooled group of at least `minGroup` sends (default 30) that landed >= `share`. Undefined when none did.
 */
export function hindsightCheapest(sends: readonly PricedOutcome[], minGroup = 30, share = 0.9): bigint | undefined {
  const groups = new Map<bigint, { n: number; landed: number }>();
  for (const r of sends) {
    const g = groups.get(r.price) ?? { n: 0, landed: 0 };
    g.n++;
    if (r.landed) g.landed++;
    groups.set(r.price, g);
  }
  const blocks: { from: bigint; n: number; landed: number }[] = [];
  for (const [price, g] of [...groups].sort(([a], [b]) => byValue(a, b))) {
    blocks.push({ from: price, n: g.n, landed: g.landed });
    while (
      blocks.length > 1 &&
      blocks[blocks.length - 2].landed / blocks[blocks.length - 2].n >=
        blocks[blocks.length - 1].landed / blocks[blocks.length - 1].n
    ) {
      const last = blocks.pop()!;
      const prev = blocks[blocks.length - 1];
      prev.n += last.n;
      prev.landed += last.landed;
    }
  }
  // A pooled group of fewer than minGroup sends (a lucky few at one fee) does not set the figure; the next one does.
  return blocks.find((b) => b.n >= minGroup && b.landed / b.n >= share)?.from;
}
