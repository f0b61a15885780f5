/**
 * Background traffic settings and the parser the localnet's config.ts calls with its environment.
 */
import { WORLD_ENV } from "../world/world-options.ts";
import {
  drawUnitLimit,
  MAINNET_UNIT_LIMITS,
  MAINNET_UNIT_PRICES,
  meanTransferCost,
  TRANSFER_BASE_COST,
} from "./mainnet-distribution.ts";
import { createRandom } from "../world/seeded-random.ts";
import { DEFAULT_ACCOUNT_LIMIT, DEFAULT_BLOCK_LIMIT } from "../chain/cost-model.ts";

/**
 * Named traffic profiles (LOCALNET_TRAFFIC). `calm` is the light traffic the localnet always had (no
 * scarcity; the default, which the gateway's fee tests and benchmarks are calibrated on); the others
 * draw requests and bids from the mainnet fit (mainnet-distribution.ts) at a demand above the limits.
 */
export const TRAFFIC_PROFILES = ["calm", "busy", "congested", "storm"] as const;
export type TrafficProfile = (typeof TRAFFIC_PROFILES)[number];

/** What a congestion profile asks of the chain, as multiples of its limits. */
export interface ProfileDemand {
  /** Requested compute units sent per slot, as a multiple of the block limit. */
  block: number;
  /** Hot accounts, each write-locked by enough transactions to ask this multiple of the account limit. */
  hotAccounts: number;
  hot: number;
  /** Hot bids are this multiple of a drawn bid (a bidding war), and at least the fit's median. */
  hotMultiplier: number;
}

export const PROFILE_DEMAND: Readonly<Record<Exclude<TrafficProfile, "calm">, ProfileDemand>> = {
  busy: { block: 1.1, hotAccounts: 1, hot: 1.25, hotMultiplier: 3 },
  congested: { block: 1.6, hotAccounts: 2, hot: 1.5, hotMultiplier: 5 },
  storm: { block: 1.4, hotAccounts: 1, hot: 3.2, hotMultiplier: 10 },
};

/** What shapes the background traffic; the same options and seed give the same transactions. */
export interface TrafficOptions {
  /** The named profile these options came from. */
  profile: TrafficProfile;
  /** "legacy": calm's spread (medianPrice, spread, unpricedShare) and 1,000-20,500 CU requests; "mainnet": the fit. */
  model: "legacy" | "mainnet";
  seed: string;
  /** Transactions sent per slot. */
  ratePerSlot: number;
  /** Funded wallets that sign the traffic. */
  wallets: number;
  /** Write-locked accounts whose fee market is dearer than the rest. */
  hotAccounts: number;
  /** Ordinary recipients. */
  coldAccounts: number;
  /** Share of transactions that write-lock a hot account. */
  hotShare: number;
  /** Share of transactions that fail on chain (insufficient funds; the fee is still charged). */
  failureShare: number;
  /** Share of transactions that set no price at all. */
  unpricedShare: number;
  /** Median compute-unit price in micro-lamports of ordinary transactions. */
  medianPrice: number;
  /** Log-normal sigma of prices: the width of the spread and weight of the tail. */
  spread: number;
  /** Hot transactions pay this multiple of an ordinary price, and at least `hotFloorPrice`. */
  hotMultiplier: number;
  hotFloorPrice: number;
  /**
   * Chance per slot of one collection operation (collection-traffic.ts: mints, spoofs, transfers, burns,
   * verify/unverify, classic and compressed) and of one marketplace listing change; 0 turns both off.
   */
  collectionOpsPerSlot: number;
}

export const DEFAULT_TRAFFIC_OPTIONS: TrafficOptions = {
  profile: "calm",
  model: "legacy",
  seed: "solgate",
  ratePerSlot: 12,
  wallets: 8,
  hotAccounts: 3,
  coldAccounts: 48,
  hotShare: 0.4,
  failureShare: 0.05,
  unpricedShare: 0.05,
  medianPrice: 5_000,
  spread: 1.6,
  hotMultiplier: 8,
  hotFloorPrice: 20_000,
  collectionOpsPerSlot: 0.5,
};

export interface TrafficConfig {
  enabled: boolean;
  options: TrafficOptions;
}

/** The traffic's environment variables, option by option (the launcher sets them from its typed options). */
export const TRAFFIC_ENV = {
  enabled: "LOCALNET_TRAFFIC",
  /** The same variable: a profile name turns traffic on with that profile. */
  profile: "LOCALNET_TRAFFIC",
  ratePerSlot: "LOCALNET_TRAFFIC_RATE",
  spread: "LOCALNET_TRAFFIC_SPREAD",
  medianPrice: "LOCALNET_TRAFFIC_MEDIAN_PRICE",
  failureShare: "LOCALNET_TRAFFIC_FAILURES",
  collectionOpsPerSlot: "LOCALNET_COLLECTION_TRAFFIC",
} as const;

type Env = Readonly<Record<string, string | undefined>>;

function number(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min || value > max)
    throw new Error(`${name} must be a number ${min}-${max}, got "${raw}"`);
  return value;
}

/**
 * The options of a congestion profile at the chain's limits: the rate sends `demand.block` times the block
 * limit in requested CU per slot (at the fit's mean cost); each hot account gets the share of transactions
 * that asks `demand.hot` times the account limit; enough wallets that no payer (also write-locked) nears its
 * account limit.
 */
export function profileOptions(
  profile: Exclude<TrafficProfile, "calm">,
  limits: { blockCostLimit: bigint; accountCostLimit: bigint },
  base: TrafficOptions = DEFAULT_TRAFFIC_OPTIONS,
): TrafficOptions {
  const demand = PROFILE_DEMAND[profile];
  const block = Number(limits.blockCostLimit);
  const account = Number(limits.accountCostLimit);
  const random = createRandom("mean-cost");
  const meanCost = meanTransferCost(() => drawUnitLimit(random));
  const ratePerSlot = Math.max(1, Math.round((demand.block * block) / meanCost));
  const hotShare = Math.min(0.95, (demand.hotAccounts * demand.hot * account) / (demand.block * block));
  // Each wallet at most a quarter of the account limit.
  const wallets = Math.max(8, Math.ceil((4 * demand.block * block) / account));
  return {
    ...base,
    profile,
    model: "mainnet",
    ratePerSlot,
    wallets,
    hotAccounts: demand.hotAccounts,
    hotShare,
    unpricedShare: MAINNET_UNIT_PRICES.zeroShare,
    medianPrice: MAINNET_UNIT_PRICES.median,
    spread: MAINNET_UNIT_PRICES.sigma,
    hotMultiplier: demand.hotMultiplier,
    hotFloorPrice: MAINNET_UNIT_PRICES.median,
  };
}

/** Mean requested compute units of the mainnet fit (for the docs and the banner). */
export const MAINNET_MEAN_REQUEST = ((random) =>
  Math.round(meanTransferCost(() => drawUnitLimit(random, MAINNET_UNIT_LIMITS)) - TRANSFER_BASE_COST))(
  createRandom("mean-cost"),
);

/**
 * Reads LOCALNET_TRAFFIC (0/1, or a profile: calm, busy, congested, storm; 1 is calm),
 * LOCALNET_TRAFFIC_RATE (transactions per slot), LOCALNET_TRAFFIC_SPREAD (log-normal sigma of prices),
 * LOCALNET_TRAFFIC_MEDIAN_PRICE (micro-lamports per CU), LOCALNET_TRAFFIC_FAILURES (share) and
 * LOCALNET_WORLD_SEED. A congestion profile is sized to `limits` (the chain's compute-unit limits).
 */
export function parseTrafficConfig(
  env: Env,
  enabledByDefault = true,
  limits: { blockCostLimit: bigint; accountCostLimit: bigint } = {
    blockCostLimit: DEFAULT_BLOCK_LIMIT,
    accountCostLimit: DEFAULT_ACCOUNT_LIMIT,
  },
): TrafficConfig {
  const raw = env[TRAFFIC_ENV.enabled];
  const profiles: readonly string[] = TRAFFIC_PROFILES;
  if (raw !== undefined && raw !== "" && !["0", "1", "true", "false", ...profiles].includes(raw)) {
    throw new Error(`LOCALNET_TRAFFIC must be 0, 1 or a profile (${TRAFFIC_PROFILES.join(", ")}), got "${raw}"`);
  }
  const profile: TrafficProfile = raw !== undefined && profiles.includes(raw) ? (raw as TrafficProfile) : "calm";
  const seeded = { ...DEFAULT_TRAFFIC_OPTIONS, seed: env[WORLD_ENV.seed] || DEFAULT_TRAFFIC_OPTIONS.seed };
  const d = profile === "calm" ? seeded : profileOptions(profile, limits, seeded);
  return {
    enabled:
      raw === undefined || raw === "" ? enabledByDefault : raw === "1" || raw === "true" || profiles.includes(raw),
    options: {
      ...d,
      ratePerSlot: Math.round(number(env, TRAFFIC_ENV.ratePerSlot, d.ratePerSlot, 0, 5_000)),
      spread: number(env, TRAFFIC_ENV.spread, d.spread, 0, 5),
      medianPrice: number(env, TRAFFIC_ENV.medianPrice, d.medianPrice, 0, 1e9),
      failureShare: number(env, TRAFFIC_ENV.failureShare, d.failureShare, 0, 1),
      collectionOpsPerSlot: number(env, TRAFFIC_ENV.collectionOpsPerSlot, d.collectionOpsPerSlot, 0, 1),
    },
  };
}
