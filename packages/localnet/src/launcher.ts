/**
 * Starts the localnet as a child process and resolves once it answers, so LiteSVM (which blocks
 * the event loop and aborts on a Rust panic) never runs inside the caller's process. A child that
 * dies before it is ready rejects the start with its stderr; one that dies later settles `exited`
 * with `expected: false`.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { LOCALNET_ENV } from "./config.ts";
import { GEYSER_ENV, type GeyserConfig } from "./geyser/geyser-options.ts";
import { loadingEnv, type AccountFileOption, type ProgramFileOption } from "./loading/loading-options.ts";
import type { FaultSettings } from "./faults.ts";
import { TRAFFIC_ENV, type TrafficOptions } from "./traffic/traffic-options.ts";
import { WORLD_ENV, type WorldOptions } from "./world/world-options.ts";

/** Sizes of the seeded world; anything not given takes its default (world/world-options.ts). */
export interface WorldLaunchOptions
  extends Partial<
    Pick<
      WorldOptions,
      | "collectionSize"
      | "compressedShare"
      | "programmableShare"
      | "nftOwners"
      | "unverifiedSpoofs"
      | "tokenHolders"
      | "smallMintHolders"
      | "realAccounts"
    >
  > {
  /** Folder for the manifest (`world-manifest.json`) and the demo keypair; default: a per-process temp folder. */
  dir?: string;
}

/** Shape of the background traffic; anything not given takes its default (traffic/traffic-options.ts). */
export type TrafficLaunchOptions = Partial<
  Pick<TrafficOptions, "profile" | "ratePerSlot" | "spread" | "medianPrice" | "failureShare" | "collectionOpsPerSlot">
>;

/**
 * Options; anything not given takes the localnet's defaults (config.ts), or what the caller's own
 * `LOCALNET_*` environment says, since the child inherits it.
 */
export interface LocalnetOptions {
  /** 0 (the default here) picks a free port. */
  port?: number;
  host?: string;
  slotMs?: number;
  confirmSlots?: number;
  finalizeSlots?: number;
  historyLimit?: number;
  blockRetention?: number;
  maxQueue?: number;
  maxTransactionsPerBlock?: number;
  /** Compute units per block (LOCALNET_BLOCK_CU_LIMIT; default 100,000,000, as solana-test-validator 4.4 at genesis). */
  blockCostLimit?: number | bigint;
  /** Compute units per write-locked account per block (LOCALNET_ACCOUNT_CU_LIMIT; default 40% of the block's). */
  accountCostLimit?: number | bigint;
  /** The slot-time regime whose limits apply from epoch 1 (LOCALNET_REDUCED_SLOT_MS: 200 by default, 400 for none). */
  reducedSlotMs?: number;
  startSlot?: bigint;
  /** Slots per epoch, no warm-up (LOCALNET_SLOTS_PER_EPOCH, at least 32; default LiteSVM's schedule). */
  slotsPerEpoch?: number;
  maxBodyBytes?: number;
  /** Files of recorded `getBlock` results served as the chain's oldest blocks (recorded-blocks.ts). */
  blocks?: string[];
  faults?: Partial<FaultSettings>;
  /** Extra send-only ports (LOCALNET_SEND_PORTS), each with its own drop rate; port 0 or none: a free port. */
  sendPorts?: { port?: number; dropRate: number }[];
  /** Serves voteSubscribe (agave's `--rpc-pubsub-enable-vote-subscription`); off by default, as in agave. */
  voteSubscription?: boolean;
  /** Directories of account JSON files in solana-test-validator's format (`--account-dir`), loaded at start. */
  accountsDir?: string | string[];
  /** Single account files (`--account ADDRESS FILE`); without `address`, the file's own `pubkey`. */
  accounts?: AccountFileOption[];
  /** Programs deployed under the upgradeable loader (`--upgradeable-program ADDRESS SO AUTHORITY`). */
  programs?: ProgramFileOption[];
  /** Seeds the world: `true` at its default sizes, an object for other sizes, `false` for an empty chain. */
  world?: boolean | WorldLaunchOptions;
  /** Runs background traffic: `true` at its defaults, an object to shape it, `false` for none. */
  traffic?: boolean | TrafficLaunchOptions;
  /**
   * Serves Yellowstone gRPC (`geyser.Geyser`): `true` (the default) on a free port, an object for a port,
   * an `x-token` or a per-client queue size, `false` for none.
   */
  geyser?: boolean | Partial<Pick<GeyserConfig, "port" | "token" | "queueLimit" | "pingMs">>;
  /** Seed of the world and the traffic (default "solgate"). */
  seed?: string;
  /** Accepted for the gateway's convenience; the localnet logs little either way. */
  logLevel?: string;
  /** Node flags for the child (e.g. `--cpu-prof` when profiling). */
  execArgv?: string[];
  /** Milliseconds to wait for the ready line (default 30 s). */
  startTimeoutMs?: number;
  /** Receives the child's stderr as it arrives (default: kept, last 16 kB, for error reports). */
  onStderr?: (text: string) => void;
}

/** How the localnet process ended. */
export interface LocalnetExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** True when `stop()` asked for it. */
  expected: boolean;
  /** The end of its stderr. */
  stderr: string;
}

/** A running localnet. */
export interface LocalnetHandle {
  rpcUrl: string;
  wsUrl: string;
  /** `http://host:port` of the Geyser gRPC server (undefined when `geyser: false`). */
  geyserUrl?: string;
  pid: number;
  /** The block engine's base URL (`<rpcUrl>/api/v1`): give it to jito-js-rpc's `JitoJsonRpcClient`. */
  blockEngineUrl: string;
  /** The extra send-only ports' URLs, in the order of `sendPorts`. */
  sendUrls: string[];
  /**
   * The marketplace the localnet serves with its collection traffic (market/marketplace.ts): the base URL of
   * its Magic Eden stats API and the symbol of each collection it lists, by collection mint.
   */
  marketplace?: { url: string; collections: Record<string, string> };
  /** Changes faults at run time (`localnet_setFaults`); resolves to the new settings. */
  control(faults: Partial<FaultSettings>): Promise<FaultSettings>;
  /** Sets the drop rate of the extra send port at `index` (`localnet_setSendPathDropRate`). */
  setSendPathDropRate(index: number, dropRate: number): Promise<{ url: string; dropRate: number }>;
  /** `localnet_status`. */
  status(): Promise<Record<string, unknown>>;
  /**
   * Settles once every seeded account is written. The localnet answers before that (its clock, blocks and
   * fees run), holding each call that could see a seeded account until then; never settles if it dies first.
   */
  loaded: Promise<void>;
  /** Stops the process (SIGTERM, then SIGKILL after 5 s). */
  stop(): Promise<LocalnetExit>;
  /** Settles when the process ends, for whatever reason. */
  exited: Promise<LocalnetExit>;
}

const MAIN = fileURLToPath(new URL("./main.ts", import.meta.url));
const STDERR_TAIL = 16 * 1024;

function envFor(options: LocalnetOptions): Record<string, string> {
  const env: Record<string, string> = {
    [LOCALNET_ENV.port]: String(options.port ?? 0),
    [LOCALNET_ENV.exitWithStdin]: "1",
  };
  const set = (key: keyof typeof LOCALNET_ENV, value: unknown) => {
    if (value !== undefined) env[LOCALNET_ENV[key]] = String(value);
  };
  set("host", options.host);
  set("slotMs", options.slotMs);
  set("slotsPerEpoch", options.slotsPerEpoch);
  set("confirmSlots", options.confirmSlots);
  set("finalizeSlots", options.finalizeSlots);
  set("historyLimit", options.historyLimit);
  set("blockRetention", options.blockRetention);
  set("maxQueue", options.maxQueue);
  set("maxTransactionsPerBlock", options.maxTransactionsPerBlock);
  set("blockCostLimit", options.blockCostLimit);
  set("accountCostLimit", options.accountCostLimit);
  set("reducedSlotMs", options.reducedSlotMs);
  set("startSlot", options.startSlot);
  set("maxBodyBytes", options.maxBodyBytes);
  set("blocks", options.blocks?.join(","));
  if (options.voteSubscription !== undefined) env[LOCALNET_ENV.voteSubscription] = options.voteSubscription ? "1" : "0";
  if (options.faults !== undefined) env[LOCALNET_ENV.faults] = JSON.stringify(options.faults);
  if (options.sendPorts !== undefined) {
    env[LOCALNET_ENV.sendPorts] = options.sendPorts.map((p) => `${p.port ?? 0}:${p.dropRate}`).join(",");
  }
  if (options.seed !== undefined) env[WORLD_ENV.seed] = options.seed;
  const accountDirs = options.accountsDir === undefined ? undefined : [options.accountsDir].flat();
  Object.assign(env, loadingEnv({ accountDirs, accounts: options.accounts, programs: options.programs }));
  Object.assign(env, worldEnv(options.world), trafficEnv(options.traffic), geyserEnv(options.geyser));
  return env;
}

function geyserEnv(geyser: LocalnetOptions["geyser"]): Record<string, string> {
  if (geyser === false) return { [GEYSER_ENV.port]: "off" };
  const settings = typeof geyser === "object" ? geyser : {};
  const env: Record<string, string> = { [GEYSER_ENV.port]: String(settings.port ?? 0) };
  if (settings.token) env[GEYSER_ENV.token] = settings.token;
  if (settings.queueLimit !== undefined) env[GEYSER_ENV.queueLimit] = String(settings.queueLimit);
  if (settings.pingMs !== undefined) env[GEYSER_ENV.pingMs] = String(settings.pingMs);
  return env;
}

function worldEnv(world: LocalnetOptions["world"]): Record<string, string> {
  if (world === undefined) return {};
  if (typeof world === "boolean") return { [WORLD_ENV.enabled]: world ? "1" : "0" };
  const env: Record<string, string> = { [WORLD_ENV.enabled]: "1" };
  for (const [key, value] of Object.entries(world) as [keyof WorldLaunchOptions, unknown][]) {
    if (value === undefined) continue;
    env[WORLD_ENV[key]] = Array.isArray(value)
      ? value.join(",")
      : typeof value === "boolean"
        ? value
          ? "1"
          : "0"
        : String(value);
  }
  return env;
}

function trafficEnv(traffic: LocalnetOptions["traffic"]): Record<string, string> {
  if (traffic === undefined) return {};
  if (typeof traffic === "boolean") return { [TRAFFIC_ENV.enabled]: traffic ? "1" : "0" };
  const env: Record<string, string> = { [TRAFFIC_ENV.enabled]: "1" };
  for (const [key, value] of Object.entries(traffic) as [keyof TrafficLaunchOptions, unknown][]) {
    if (value !== undefined) env[TRAFFIC_ENV[key]] = String(value);
  }
  return env;
}

async function rpc(url: string, method: string, params: unknown[]): Promise<unknown> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = (await response.json()) as { result?: unknown; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result;
}

/** Spawns the localnet and resolves when it is ready; rejects if it dies or stays silent. */
export function startLocalnet(options: LocalnetOptions = {}): Promise<LocalnetHandle> {
  let env: Record<string, string>;
  try {
    env = envFor(options);
  } catch (error) {
    return Promise.reject(error);
  }
  const child = spawn(process.execPath, [...(options.execArgv ?? []), MAIN], {
    env: { ...process.env, ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  let stopping = false;
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (text: string) => {
    stderr = (stderr + text).slice(-STDERR_TAIL);
    options.onStderr?.(text);
  });
  const exited = new Promise<LocalnetExit>((resolve) => {
    child.once("exit", (code, signal) => resolve({ code, signal, expected: stopping, stderr }));
  });
  // A failed stdin write (the child is gone) is reported through `exited`, not thrown.
  child.stdin.on("error", () => undefined);

  const stop = async (): Promise<LocalnetExit> => {
    if (child.exitCode === null && child.signalCode === null) {
      stopping = true;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
      const result = await exited;
      clearTimeout(timer);
      return result;
    }
    return exited;
  };

  let markLoaded: () => void = () => {};
  const loaded = new Promise<void>((resolve) => {
    markLoaded = resolve;
  });
  return new Promise<LocalnetHandle>((resolve, reject) => {
    let buffered = "";
    const timeout = setTimeout(() => {
      void stop();
      reject(new Error(`localnet did not become ready within ${options.startTimeoutMs ?? 30_000} ms\n${stderr}`));
    }, options.startTimeoutMs ?? 30_000);
    void exited.then((how) => {
      clearTimeout(timeout);
      reject(new Error(`localnet exited before it was ready (code ${how.code}, signal ${how.signal})\n${how.stderr}`));
    });
    child.on("error", (err) => {
      clearTimeout(timeout);
      reject(err);
    });
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (text: string) => {
      buffered += text;
      let newline: number;
      while ((newline = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        let event: {
          event?: string;
          rpcUrl?: string;
          wsUrl?: string;
          geyserUrl?: string;
          blockEngineUrl?: string;
          sendUrls?: string[];
          marketplace?: LocalnetHandle["marketplace"];
        };
        try {
          event = JSON.parse(line);
        } catch {
          continue;
        }
        if (event.event === "loaded") markLoaded();
        if (event.event !== "ready" || typeof event.rpcUrl !== "string") continue;
        clearTimeout(timeout);
        const rpcUrl = event.rpcUrl;
        resolve({
          rpcUrl,
          wsUrl: event.wsUrl ?? rpcUrl.replace(/^http/, "ws"),
          geyserUrl: event.geyserUrl,
          pid: child.pid!,
          blockEngineUrl: event.blockEngineUrl ?? `${rpcUrl}/api/v1`,
          sendUrls: event.sendUrls ?? [],
          ...(event.marketplace === undefined ? {} : { marketplace: event.marketplace }),
          control: (faults) => rpc(rpcUrl, "localnet_setFaults", [faults]) as Promise<FaultSettings>,
          status: () => rpc(rpcUrl, "localnet_status", []) as Promise<Record<string, unknown>>,
          setSendPathDropRate: (index, dropRate) =>
            rpc(rpcUrl, "localnet_setSendPathDropRate", [index, dropRate]) as Promise<{
              url: string;
              dropRate: number;
            }>,
          loaded,
          stop,
          exited,
        });
      }
    });
  });
}
