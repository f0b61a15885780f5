/** The upstream module's public surface. */
export { createUpstream } from "./upstream.ts";
export type {
  Upstream,
  UpstreamOptions,
  DasClient,
  DasCallOptions,
  ProgramAccountKeysOptions,
  ProgramAccountsFilter,
} from "./upstream.ts";
export type { UpstreamMetrics, UpstreamOutcome } from "./metrics.ts";
export { noopUpstreamMetrics, redactUrl } from "./metrics.ts";
export { rpcErrorOf, isRpcErrorCode } from "./rpc-errors.ts";
export { nodeErrorOf } from "./node-errors.ts";
export type { NodeError, NodeErrorKind } from "./node-errors.ts";
export type { RpcErrorInfo } from "./rpc-errors.ts";
export { createSignatureFeed, webSocketUrlFor } from "./signature-feed.ts";
export type { SignatureFeed, SignatureFeedOptions } from "./signature-feed.ts";
export type { BreakerState, EndpointBreakerOptions } from "./endpoint-breaker.ts";
export type { UpstreamCallTrace, UpstreamCallTracer } from "./call-tracer.ts";
export type { RefusedAnswer } from "./resilient-transport.ts";
export { createGeyserSource, createFallbackFeed } from "./geyser-source.ts";
export { createGeyserBlocks } from "./geyser-blocks.ts";
export type { GeyserBlocks, GeyserBlocksOptions, GeyserBlocksStats } from "./geyser-blocks.ts";
export type { GeyserSource, GeyserSourceOptions, GeyserSourceStats } from "./geyser-source.ts";
