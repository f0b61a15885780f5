/**
 * The localnet's configuration, read once from the environment (`LOCALNET_*`) and validated.
 * The launcher passes its options to the child process through the same variables.
 */
import type { ChainOptions } from "./chain/chain.ts";
import {
  accountLimitFor,
  DEFAULT_ACCOUNT_LIMIT,
  DEFAULT_BLOCK_LIMIT,
  DEFAULT_REDUCED_SLOT_MS,
  SLOT_TIME_REGIMES,
} from "./chain/cost-model.ts";
import { mergeFaults, NO_FAULTS, type FaultSettings } from "./faults.ts";
import { parseGeyserConfig, type GeyserConfig } from "./geyser/geyser-options.ts";
import { parseLoadingConfig, type LoadingConfig } from "./loading/loading-options.ts";
import { parseTrafficConfig, type TrafficConfig } from "./traffic/traffic-options.ts";
import { parseWorldConfig, type WorldConfig } from "./world/world-options.ts";

/** Everything the localnet process can be told. */
export interface LocalnetConfig extends Omit<ChainOptions, "recordedBlocks"> {
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** Largest request body (agave: 50 kB); tests raise it to batch more. */
  maxBodyBytes: number;
  /** Files of recorded `getBlock` results served as the chain's oldest blocks (see recorded-blocks.ts). */
  blocks: string[];
  faults: FaultSettings;
  /** Exit when stdin closes (set by the launcher, so a dead parent takes its localnet with it). */
  exitWithStdin: boolean;
  /** Seeded world (LOCALNET_WORLD and sizes; world/world-options.ts); by default on only when run on its own. */
  world: WorldConfig;
  /** Background traffic (LOCALNET_TRAFFIC...; traffic/traffic-options.ts); by default on only when run on its own. */
  traffic: TrafficConfig;
  /** Serve voteSubscribe (LOCALNET_VOTE_SUBSCRIPTION=1; agave's `--rpc-pubsub-enable-vote-subscription`). */
  voteSubscription: boolean;
  /** Accounts and programs loaded at start (LOCALNET_ACCOUNTS_DIR, LOCALNET_ACCOUNTS, LOCALNET_PROGRAMS; loading/). */
  loading: LoadingConfig;
  /** Yellowstone gRPC (LOCALNET_GEYSER_PORT, default 10000; `off`: none; geyser/geyser-options.ts). Unset: none. */
  geyser?: GeyserConfig | null;
  /** solana-test-validator's ledger directory (LOCALNET_LEDGER_DIR, LOCALNET_LEDGER_RESET; ledger/); none by default. */
  ledger: { dir: string | undefined; reset: boolean };
  /** A second port serving PubSub alone, as agave's RPC port + 1 (LOCALNET_PUBSUB_PORT); none by default. */
  pubsubPort: number | undefined;
  /** No human lines (LOCALNET_QUIET=1, `--quiet`). */
  quiet: boolean;
  /** Extra send-only ports, each with its own drop rate (LOCALNET_SEND_PORTS=`port:rate,...`; port 0: any free port). */
  sendPorts: SendPortConfig[];
}

/** One extra send-only port (sendTransaction, getHealth) and the share of accepted sends it drops. */
export interface SendPortConfig {
  port: number;
  dropRate: number;
}

/** Defaults: a node-like chain on 127.0.0.1:8899. */
export const DEFAULT_LOCALNET_CONFIG: LocalnetConfig = {
  host: "127.0.0.1",
  port: 8899,
  slotMs: 400,
  confirmSlots: 1,
  finalizeSlots: 32,
  historyLimit: 200_000,
  blockRetention: 1024,
  maxQueue: 100_000,
  maxTransactionsPerBlock: 10_000,
  // solana-test-validator 4.4 at genesis (SIMD-0286 active): 100M / 40M, the 200 ms regime's half from epoch 1.
  blockCostLimit: DEFAULT_BLOCK_LIMIT,
  accountCostLimit: DEFAULT_ACCOUNT_LIMIT,
  reducedSlotMs: DEFAULT_REDUCED_SLOT_MS,
  startSlot: 0n,
  maxBodyBytes: 50 * 1024,
  blocks: [],
  faults: NO_FAULTS,
  exitWithStdin: false,
  voteSubscription: false,
  world: parseWorldConfig({}, false),
  traffic: parseTrafficConfig({}, false),
  loading: parseLoadingConfig({}),
  ledger: { dir: undefined, reset: false },
  pubsubPort: undefined,
  quiet: false,
  sendPorts: [],
};

/** Environment variable names, option by option. */
export const LOCALNET_ENV = {
  host: "LOCALNET_HOST",
  port: "LOCALNET_PORT",
  slotMs: "LOCALNET_SLOT_MS",
  confirmSlots: "LOCALNET_CONFIRM_SLOTS",
  finalizeSlots: "LOCALNET_FINALIZE_SLOTS",
  historyLimit: "LOCALNET_HISTORY_LIMIT",
  blockRetention: "LOCALNET_BLOCK_RETENTION",
  maxQueue: "LOCALNET_MAX_QUEUE",
  maxTransactionsPerBlock: "LOCALNET_MAX_TX_PER_BLOCK",
  blockCostLimit: "LOCALNET_BLOCK_CU_LIMIT",
  accountCostLimit: "LOCALNET_ACCOUNT_CU_LIMIT",
  reducedSlotMs: "LOCALNET_REDUCED_SLOT_MS",
  startSlot: "LOCALNET_START_SLOT",
  maxBodyBytes: "LOCALNET_MAX_BODY_BYTES",
  blocks: "LOCALNET_BLOCKS",
  faults: "LOCALNET_FAULTS",
  exitWithStdin: "LOCALNET_EXIT_WITH_STDIN",
  voteSubscription: "LOCALNET_VOTE_SUBSCRIPTION",
  ledgerDir: "LOCALNET_LEDGER_DIR",
  ledgerReset: "LOCALNET_LEDGER_RESET",
  pubsubPort: "LOCALNET_PUBSUB_PORT",
  quiet: "LOCALNET_QUIET",
  slotsPerEpoch: "LOCALNET_SLOTS_PER_EPOCH",
  faucetSol: "LOCALNET_FAUCET_SOL",
  sendPorts: "LOCALNET_SEND_PORTS",
  bundleDropRate: "LOCALNET_BUNDLE_DROP_RATE",
} as const;

/** Parses LOCALNET_SEND_PORTS: `port:dropRate` pairs separated by commas (`0:0.9,0:0.5`). */
export function parseSendPorts(raw: string | undefined): SendPortConfig[] {
  if (raw === undefined || raw.trim() === "") return [];
  return raw.split(",").map((item) => {
    const match = /^\s*(\d{1,5})(?::(\d*\.?\d+))?\s*$/.exec(item);
    const port = match === null ? Number.NaN : Number(match[1]);
    const dropRate = match?.[2] === undefined ? 0 : Number(match[2]);
    if (match === null || port > 65535 || !(dropRate >= 0 && dropRate <= 1)) {
      throw new Error(
        `${LOCALNET_ENV.sendPorts} must be port:dropRate pairs (rate in [0, 1]) separated by commas, got "${raw}"`,
      );
    }
    return { port, dropRate };
  });
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${name} must be an integer between ${min} and ${max}, got "${raw}"`);
  }
  return value;
}

/** A 0/1 switch (unset or empty: off). */
function flag(env: NodeJS.ProcessEnv, name: string): boolean {
  const raw = env[name];
  if (raw === undefined || raw === "" || raw === "0") return false;
  if (raw === "1") return true;
  throw new Error(`${name} must be 0 or 1, got "${raw}"`);
}

/** An amount of SOL (up to 9 decimals) in lamports; undefined when unset. */
function sol(env: NodeJS.ProcessEnv, name: string): bigint | undefined {
  const raw = env[name];
  if (raw === undefined || raw === "") return undefined;
  const match = /^(\d{1,10})(?:\.(\d{1,9}))?$/.exec(raw);
  if (!match) throw new Error(`${name} must be an amount of SOL (up to 9 decimals), got "${raw}"`);
  return BigInt(match[1]!) * 1_000_000_000n + BigInt((match[2] ?? "").padEnd(9, "0"));
}

/** Reads and validates the configuration; throws an Error naming the bad variable. */
export function loadLocalnetConfig(env: NodeJS.ProcessEnv = process.env): LocalnetConfig {
  const d = DEFAULT_LOCALNET_CONFIG;
  const startRaw = env[LOCALNET_ENV.startSlot];
  if (startRaw !== undefined && startRaw !== "" && !/^\d{1,19}$/.test(startRaw)) {
    throw new Error(`${LOCALNET_ENV.startSlot} must be a slot number, got "${startRaw}"`);
  }
  let faults = d.faults;
  const faultsRaw = env[LOCALNET_ENV.faults];
  if (faultsRaw !== undefined && faultsRaw !== "") {
    try {
      faults = mergeFaults(NO_FAULTS, JSON.parse(faultsRaw));
    } catch (e) {
      throw new Error(`${LOCALNET_ENV.faults} must be a JSON object of fault settings: ${(e as Error).message}`);
    }
  }
  const bundleDropRaw = env[LOCALNET_ENV.bundleDropRate];
  if (bundleDropRaw !== undefined && bundleDropRaw !== "") {
    try {
      faults = mergeFaults(faults, { bundleDropRate: Number(bundleDropRaw) });
    } catch (e) {
      throw new Error(`${LOCALNET_ENV.bundleDropRate}: ${(e as Error).message}`);
    }
  }
  const standalone = env.NODE_ENV !== "test" && env[LOCALNET_ENV.exitWithStdin] !== "1";
  const confirmSlots = integer(env, LOCALNET_ENV.confirmSlots, d.confirmSlots, 0, 1000);
  const finalizeSlots = integer(env, LOCALNET_ENV.finalizeSlots, d.finalizeSlots, 0, 10_000);
  if (finalizeSlots < confirmSlots) {
    throw new Error(
      `${LOCALNET_ENV.finalizeSlots} (${finalizeSlots}) must not be below ${LOCALNET_ENV.confirmSlots} (${confirmSlots})`,
    );
  }
  // Compute-unit limits: the account limit defaults to 40% of the block limit (as in each of agave 4.4's regimes),
  // and may not exceed it.
  const blockCostLimit = BigInt(
    integer(env, LOCALNET_ENV.blockCostLimit, Number(d.blockCostLimit), 1_000, 10_000_000_000),
  );
  const accountCostLimit = BigInt(
    integer(env, LOCALNET_ENV.accountCostLimit, Number(accountLimitFor(blockCostLimit)), 1_000, 10_000_000_000),
  );
  if (accountCostLimit > blockCostLimit) {
    throw new Error(
      `${LOCALNET_ENV.accountCostLimit} (${accountCostLimit}) must not be above ${LOCALNET_ENV.blockCostLimit} (${blockCostLimit})`,
    );
  }
  const reducedRaw = env[LOCALNET_ENV.reducedSlotMs];
  const reducedSlotMs = reducedRaw === undefined || reducedRaw === "" ? d.reducedSlotMs : Number(reducedRaw);
  if (reducedSlotMs === undefined || SLOT_TIME_REGIMES[reducedSlotMs] === undefined) {
    throw new Error(
      `${LOCALNET_ENV.reducedSlotMs} must be one of ${Object.keys(SLOT_TIME_REGIMES).join(", ")} (ms; 400: no slot-time regime), got "${reducedRaw}"`,
    );
  }
  return {
    host: env[LOCALNET_ENV.host] || d.host,
    blockCostLimit,
    accountCostLimit,
    reducedSlotMs,
    port: integer(env, LOCALNET_ENV.port, d.port, 0, 65535),
    slotMs: integer(env, LOCALNET_ENV.slotMs, d.slotMs, 5, 60_000),
    confirmSlots,
    finalizeSlots,
    historyLimit: integer(env, LOCALNET_ENV.historyLimit, d.historyLimit, 1, 100_000_000),
    blockRetention: integer(env, LOCALNET_ENV.blockRetention, d.blockRetention, 200, 10_000_000),
    maxQueue: integer(env, LOCALNET_ENV.maxQueue, d.maxQueue, 1, 10_000_000),
    maxTransactionsPerBlock: integer(
      env,
      LOCALNET_ENV.maxTransactionsPerBlock,
      d.maxTransactionsPerBlock,
      1,
      1_000_000,
    ),
    startSlot: startRaw ? BigInt(startRaw) : d.startSlot,
    maxBodyBytes: integer(env, LOCALNET_ENV.maxBodyBytes, d.maxBodyBytes, 1024, 64 * 1024 * 1024),
    blocks: (env[LOCALNET_ENV.blocks] ?? "")
      .split(",")
      .map((f) => f.trim())
      .filter((f) => f !== ""),
    faults,
    exitWithStdin: env[LOCALNET_ENV.exitWithStdin] === "1",
    voteSubscription: flag(env, LOCALNET_ENV.voteSubscription),
    // Run on its own (`npm run localnet`), the localnet seeds its world and runs traffic. Launched as a
    // child (the caller opts in with LOCALNET_WORLD=1 / LOCALNET_TRAFFIC=1) or under vitest (NODE_ENV=test)
    // it starts empty and quiet, so tests and benchmarks are not slowed or disturbed.
    world: parseWorldConfig(env, standalone),
    traffic: parseTrafficConfig(env, standalone, { blockCostLimit, accountCostLimit }),
    loading: parseLoadingConfig(env),
    geyser: parseGeyserConfig(env),
    ledger: { dir: env[LOCALNET_ENV.ledgerDir] || undefined, reset: flag(env, LOCALNET_ENV.ledgerReset) },
    pubsubPort:
      env[LOCALNET_ENV.pubsubPort] === undefined || env[LOCALNET_ENV.pubsubPort] === ""
        ? undefined
        : integer(env, LOCALNET_ENV.pubsubPort, 0, 0, 65535),
    quiet: flag(env, LOCALNET_ENV.quiet),
    // agave's MINIMUM_SLOTS_PER_EPOCH is 32.
    slotsPerEpoch: env[LOCALNET_ENV.slotsPerEpoch]
      ? BigInt(integer(env, LOCALNET_ENV.slotsPerEpoch, 0, 32, 2 ** 40))
      : undefined,
    faucetLamports: sol(env, LOCALNET_ENV.faucetSol),
    sendPorts: parseSendPorts(env[LOCALNET_ENV.sendPorts]),
  };
}
