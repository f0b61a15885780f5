/**
 * `@solgate/localnet`: a Solana test chain (JSON-RPC and PubSub on LiteSVM) run as a child process.
 * This is its one API: start it with typed options, get its URLs and a handle to stop it.
 */
export { startLocalnet } from "./launcher.ts";
export type {
  LocalnetExit,
  LocalnetHandle,
  LocalnetOptions,
  TrafficLaunchOptions,
  WorldLaunchOptions,
} from "./launcher.ts";
export type { FaultSettings } from "./faults.ts";
export type { AccountFileOption, ProgramFileOption } from "./loading/loading-options.ts";
export type { ManifestCollection, ManifestTraffic, WorldManifest } from "./world/world-types.ts";
export type { TrafficProfile } from "./traffic/traffic-options.ts";
