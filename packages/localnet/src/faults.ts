/**
 * Fault injection for tests: dropped transactions, slow or refused responses, stalls, a lagging
 * view of the chain and frozen block production. Set at start (LOCALNET_FAULTS) or at run time
 * with `localnet_setFaults`; control methods are never affected. Decisions come from a seeded
 * PRNG so a test run is reproducible.
 */
import { createPrng } from "./prng.ts";
import { invalidParams } from "./rpc/protocol.ts";

/** The fault settings; every field is optional in updates. */
export interface FaultSettings {
  /** Fraction of accepted sendTransaction calls that are answered normally but never executed. */
  dropRate: number;
  /** Fraction of the block engine's accepted bundles and transactions (`/api/v1/...`) answered but never buffered. */
  bundleDropRate: number;
  /** Milliseconds added before answering each request. */
  delayMs: number;
  /** Fraction of requests answered with HTTP 429. */
  rate429: number;
  /** Fraction of requests answered with HTTP 503. */
  rate503: number;
  /** Fraction of requests never answered. */
  stallRate: number;
  /** Slots the served view lags behind the chain. */
  lagSlots: number;
  /** Stop producing blocks (the slot stands still). */
  freeze: boolean;
  /** PRNG seed; setting it restarts the sequence. */
  seed: number;
}

/** What the HTTP layer should do with one request. */
export type RequestFault =
  | { kind: "stall" }
  | { kind: "status"; status: 429 | 503 }
  | { kind: "none"; delayMs: number };

/** Live fault state. */
export interface Faults {
  get(): FaultSettings;
  /** Validates and applies a partial update; returns the new settings. Throws -32602 on bad input. */
  set(update: unknown): FaultSettings;
  /** Decides the fate of one (non-control) request. */
  forRequest(): RequestFault;
  /** Should this accepted transaction be silently dropped? */
  dropTransaction(): boolean;
  /** Should this bundle (or transaction) accepted by the block engine be silently dropped? */
  dropBundle(): boolean;
}

/** Defaults: no faults. */
export const NO_FAULTS: FaultSettings = {
  dropRate: 0,
  bundleDropRate: 0,
  delayMs: 0,
  rate429: 0,
  rate503: 0,
  stallRate: 0,
  lagSlots: 0,
  freeze: false,
  seed: 1,
};

const RATES = ["dropRate", "bundleDropRate", "rate429", "rate503", "stallRate"] as const;
const COUNTS = ["delayMs", "lagSlots", "seed"] as const;

/** Validates a partial update against the current settings (also used for LOCALNET_FAULTS). */
export function mergeFaults(current: FaultSettings, update: unknown): FaultSettings {
  if (update === null || typeof update !== "object" || Array.isArray(update)) {
    throw invalidParams("Invalid params: faults must be an object");
  }
  const next: FaultSettings = { ...current };
  for (const [key, value] of Object.entries(update)) {
    if ((RATES as readonly string[]).includes(key)) {
      if (typeof value !== "number" || !(value >= 0 && value <= 1))
        throw invalidParams(`Invalid params: ${key} must be a number in [0, 1]`);
      next[key as (typeof RATES)[number]] = value;
    } else if ((COUNTS as readonly string[]).includes(key)) {
      if (typeof value !== "number" || !Number.isInteger(value) || value < 0) {
        throw invalidParams(`Invalid params: ${key} must be a non-negative integer`);
      }
      next[key as (typeof COUNTS)[number]] = value;
    } else if (key === "freeze") {
      if (typeof value !== "boolean") throw invalidParams("Invalid params: freeze must be a boolean");
      next.freeze = value;
    } else {
      throw invalidParams(`Invalid params: unknown fault \`${key}\``);
    }
  }
  return next;
}

/** Creates fault state; `onChange` lets the chain follow `freeze`. */
export function createFaults(initial: FaultSettings, onChange?: (settings: FaultSettings) => void): Faults {
  let settings = { ...initial };
  let random = createPrng(settings.seed);
  return {
    get: () => ({ ...settings }),
    set(update) {
      const next = mergeFaults(settings, update);
      if (next.seed !== settings.seed || (update as { seed?: number }).seed !== undefined)
        random = createPrng(next.seed);
      settings = next;
      onChange?.(settings);
      return { ...settings };
    },
    forRequest() {
      if (settings.stallRate > 0 && random() < settings.stallRate) return { kind: "stall" };
      if (settings.rate429 > 0 && random() < settings.rate429) return { kind: "status", status: 429 };
      if (settings.rate503 > 0 && random() < settings.rate503) return { kind: "status", status: 503 };
      return { kind: "none", delayMs: settings.delayMs };
    },
    dropTransaction: () => settings.dropRate > 0 && random() < settings.dropRate,
    dropBundle: () => settings.bundleDropRate > 0 && random() < settings.bundleDropRate,
  };
}
