/**
 * Background traffic settings and the parser the localnet's config.ts calls with its environment.
 */
import { WORLD_ENV } from "../world/world-options.ts";

/** What shapes the background traffic; the same options and seed give the same transactions. */
export interface TrafficOptions {
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
}

export const DEFAULT_TRAFFIC_OPTIONS: TrafficOptions = {
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
};

export interface TrafficConfig {
  enabled: boolean;
  options: TrafficOptions;
}

/** The traffic's environment variables, option by option (the launcher sets them from its typed options). */
export const TRAFFIC_ENV = {
  enabled: "LOCALNET_TRAFFIC",
  ratePerSlot: "LOCALNET_TRAFFIC_RATE",
  spread: "LOCALNET_TRAFFIC_SPREAD",
  medianPrice: "LOCALNET_TRAFFIC_MEDIAN_PRICE",
  failureShare: "LOCALNET_TRAFFIC_FAILURES",
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
 * Reads LOCALNET_TRAFFIC (0/1), LOCALNET_TRAFFIC_RATE (transactions per slot),
 * LOCALNET_TRAFFIC_SPREAD (log-normal sigma of prices), LOCALNET_TRAFFIC_MEDIAN_PRICE
 * (micro-lamports per CU), LOCALNET_TRAFFIC_FAILURES (share) and LOCALNET_WORLD_SEED.
 */
export function parseTrafficConfig(env: Env, enabledByDefault = true): TrafficConfig {
  const d = DEFAULT_TRAFFIC_OPTIONS;
  const raw = env[TRAFFIC_ENV.enabled];
  if (raw !== undefined && raw !== "" && !["0", "1", "true", "false"].includes(raw)) {
    throw new Error(`LOCALNET_TRAFFIC must be 0 or 1, got "${raw}"`);
  }
  return {
    enabled: raw === undefined || raw === "" ? enabledByDefault : raw === "1" || raw === "true",
    options: {
      ...d,
      seed: env[WORLD_ENV.seed] || d.seed,
      ratePerSlot: Math.round(number(env, TRAFFIC_ENV.ratePerSlot, d.ratePerSlot, 0, 5_000)),
      spread: number(env, TRAFFIC_ENV.spread, d.spread, 0, 5),
      medianPrice: number(env, TRAFFIC_ENV.medianPrice, d.medianPrice, 0, 1e9),
      failureShare: number(env, TRAFFIC_ENV.failureShare, d.failureShare, 0, 1),
    },
  };
}
