/**
 * Market-data configuration: marketplace endpoints and keys, and which collection maps to which
 * listing. config.ts reads the environment and calls {@link parseMarketConfig}; main.ts turns the
 * result into one {@link FloorPrices} shared by every chain ({@link createMarketFromConfig}).
 *
 *   SOLGATE_MAGICEDEN_URL      default https://api-mainnet.magiceden.dev
 *   SOLGATE_MAGICEDEN_API_KEY  optional (sent as Authorization: Bearer)
 *   SOLGATE_TENSOR_URL         default https://api.mainnet.tensordev.io
 *   SOLGATE_TENSOR_API_KEY     optional (sent as x-tensor-api-key)
 *   SOLGATE_FLOOR_SOURCES      `<collection address>=<magiceden|tensor>:<symbol or slug>`, comma-separated,
 *                              e.g. `J1S9H3QjnRtBbbuD4HjPV6RpRhwuk4zKbxsnCHuTgh9w=magiceden:mad_lads`
 *   SOLGATE_FLOOR_TIMEOUT_MS   longest wait for a marketplace, default 1000
 *   SOLGATE_FLOOR_TTL_MS       how long a floor price is served from cache, default 60000
 *
 * On the embedded localnet, its marketplace is Magic Eden's default URL and source (withLocalMarketplace).
 */
import { isAddress } from "@solana/kit";
import { createFloorPrices } from "./floor-prices.ts";
import type { FloorPrices } from "./floor-prices.ts";
import { createMagicEdenSource, MAGIC_EDEN_DEFAULT_URL } from "./magic-eden.ts";
import type { FloorSourceRef } from "./market-source.ts";
import { createTensorSource, TENSOR_DEFAULT_URL } from "./tensor.ts";

/** The market section of the configuration. */
export interface MarketConfig {
  magicEden: { url: string; apiKey?: string };
  tensor: { url: string; apiKey?: string };
  /** Collection address -> listing. Empty: no floor prices at all. */
  floorSources: Record<string, FloorSourceRef>;
  timeoutMs: number;
  ttlMs: number;
}

const SOURCES = ["magiceden", "tensor"] as const;
const LISTING_ID = /^[A-Za-z0-9_.-]{1,100}$/u;

/** Reads the market variables through `get`; appends problems (never echoing keys) to `problems`. */
export function parseMarketConfig(get: (name: string) => string | undefined, problems: string[]): MarketConfig {
  const url = (name: string, fallback: string): string => {
    const raw = get(name);
    if (raw === undefined) return fallback;
    try {
      const u = new URL(raw);
      if (u.protocol === "http:" || u.protocol === "https:") return raw;
    } catch {}
    problems.push(`${name} must be an http(s) URL`);
    return fallback;
  };
  const ms = (name: string, fallback: number, min: number, max: number): number => {
    const raw = get(name);
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!/^\d+$/u.test(raw) || n < min || n > max) {
      problems.push(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`);
      return fallback;
    }
    return n;
  };
  const key = (name: string): { apiKey?: string } => {
    const raw = get(name);
    if (raw === undefined) return {};
    if (!/^[\x21-\x7e]+$/u.test(raw)) problems.push(`${name} must be printable ASCII without spaces`);
    return { apiKey: raw };
  };

  const floorSources: Record<string, FloorSourceRef> = {};
  for (const entry of (get("SOLGATE_FLOOR_SOURCES") ?? "")
    .split(",")
    .map((e) => e.trim())
    .filter((e) => e !== "")) {
    const match = /^([^=\s]+)=([a-z]+):(.+)$/u.exec(entry);
    const where = `SOLGATE_FLOOR_SOURCES entry ${JSON.stringify(entry.slice(0, 120))}`;
    if (match === null) {
      problems.push(`${where} must look like <collection address>=<magiceden|tensor>:<symbol>`);
      continue;
    }
    const [, address, source, id] = match;
    if (!isAddress(address)) problems.push(`${where}: ${JSON.stringify(address)} is not a base58 address`);
    else if (!(SOURCES as readonly string[]).includes(source))
      problems.push(`${where}: the source must be one of ${SOURCES.join(", ")}`);
    else if (!LISTING_ID.test(id)) problems.push(`${where}: the symbol must be 1-100 letters, digits, _ . or -`);
    else if (Object.hasOwn(floorSources, address)) problems.push(`${where}: ${address} is mapped twice`);
    else floorSources[address] = { source, id };
  }

  return {
    magicEden: { url: url("SOLGATE_MAGICEDEN_URL", MAGIC_EDEN_DEFAULT_URL), ...key("SOLGATE_MAGICEDEN_API_KEY") },
    tensor: { url: url("SOLGATE_TENSOR_URL", TENSOR_DEFAULT_URL), ...key("SOLGATE_TENSOR_API_KEY") },
    floorSources,
    timeoutMs: ms("SOLGATE_FLOOR_TIMEOUT_MS", 1000, 50, 30_000),
    ttlMs: ms("SOLGATE_FLOOR_TTL_MS", 60_000, 0, 86_400_000),
  };
}

/**
 * The market configuration with the embedded localnet's marketplace (its Magic Eden stats API and the symbols
 * of the collections it lists): used when Magic Eden's URL is the default, for the collections no
 * SOLGATE_FLOOR_SOURCES entry maps already. An operator's own SOLGATE_MAGICEDEN_URL wins.
 */
export function withLocalMarketplace(
  config: MarketConfig,
  marketplace: { url: string; collections: Readonly<Record<string, string>> } | undefined,
): MarketConfig {
  if (marketplace === undefined || config.magicEden.url !== MAGIC_EDEN_DEFAULT_URL) return config;
  const local: Record<string, FloorSourceRef> = {};
  for (const [mint, symbol] of Object.entries(marketplace.collections))
    if (isAddress(mint) && LISTING_ID.test(symbol)) local[mint] = { source: "magiceden", id: symbol };
  return { ...config, magicEden: { url: marketplace.url }, floorSources: { ...local, ...config.floorSources } };
}

/** The floor-price lookup the configuration describes (shared by all chains: one cache, one rate limit). */
export function createMarketFromConfig(
  config: MarketConfig,
  onError?: (error: unknown, ref: FloorSourceRef) => void,
  budget?: (source: string) => Promise<boolean>,
): FloorPrices {
  return createFloorPrices({
    ...(budget === undefined ? {} : { budget }),
    sources: [createMagicEdenSource(config.magicEden), createTensorSource(config.tensor)],
    collections: config.floorSources,
    timeoutMs: config.timeoutMs,
    ttlMs: config.ttlMs,
    onError,
  });
}
