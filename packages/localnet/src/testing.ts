/**
 * The localnet's building blocks that the gateway's tests and benchmarks reuse to work out what
 * the chain holds (the Token Metadata codec, the generated collection, DAS rendering, the traffic
 * plan). Not for the gateway's runtime: it imports only the package's main entry (index.ts).
 */
export { decodeMetadata, encodeMetadata, trimNul } from "./world/token-metadata.ts";
export type { TokenMetadata } from "./world/token-metadata.ts";
export { buildGeneratedCollection } from "./world/generated-collection.ts";
export { DEFAULT_WORLD_OPTIONS } from "./world/world-options.ts";
export { deriveKey } from "./world/seeded-random.ts";
export { createAssetIndex } from "./das/asset-index.ts";
export { renderAsset } from "./das/asset-view.ts";
export { planTraffic } from "./traffic/traffic-generator.ts";
export { parseTrafficConfig } from "./traffic/traffic-options.ts";
export { TRAFFIC_PROFILES, profileOptions } from "./traffic/traffic-options.ts";
export type { TrafficProfile } from "./traffic/traffic-options.ts";
export {
  accountLimitFor,
  computeBudgetLimits,
  MAX_BLOCK_UNITS,
  transactionCost,
  transactionPriority,
  transactionReward,
} from "./chain/cost-model.ts";
export { computeBurnerElf, computeBurnerUnits } from "./programs/compute-burner-program.ts";
