/**
 * Plugs the world, the DAS index and the background traffic into the localnet's seams
 * (localnet.ts `LocalnetHooks`): `seed` writes the world through the account index's bulk API and
 * builds the DAS index from the same accounts, then follows every account the chain touches;
 * `extraMethods` serves DAS; `onStarted` starts the traffic once the server listens.
 */
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AccountIndex, SeedAccount } from "../accounts/index.ts";
import type { Chain } from "../chain/chain.ts";
import { createAssetIndex, type AccountView, type AssetIndex } from "../das/asset-index.ts";
import { createDasMethods } from "../das/das-methods.ts";
import type { MethodTable } from "../rpc/protocol.ts";
import { createTrafficGenerator, planTraffic, type TrafficPlan } from "../traffic/traffic-generator.ts";
import type { TrafficConfig } from "../traffic/traffic-options.ts";
import { startTraffic, type TrafficRunner } from "../traffic/traffic-runner.ts";
import { summarize, writeWorldFiles, type WrittenManifest } from "./manifest.ts";
import { loadOrBuildWorld } from "./world-cache.ts";
import type { WorldConfig } from "./world-options.ts";
import type { WorldAccount } from "./world-types.ts";

/** The part of the localnet these hooks use (a structural subset of localnet.ts's `LocalnetWorld`). */
export interface HookWorld {
  chain: Pick<Chain, "onAccountsTouched" | "onBlock" | "submit" | "executor">;
  index: Pick<AccountIndex, "seedAccounts">;
}

export interface WorldHooksOptions {
  world: WorldConfig;
  traffic: TrafficConfig;
  /** Where the manifest and demo keypair go; defaults to a per-process folder under the OS temp dir. */
  outDir?: string;
  log?: (line: string) => void;
}

/** Hooks plus what they built, for tests and the composition root. */
export interface WorldHooks {
  seed(world: HookWorld): void;
  extraMethods(world: HookWorld): MethodTable[];
  onStarted(world: HookWorld): void;
  /** The DAS index (exists once `seed` ran, world or not). */
  readonly assets: AssetIndex | undefined;
  readonly written: WrittenManifest | undefined;
  readonly traffic: (TrafficPlan & { runner?: TrafficRunner }) | undefined;
}

/** World accounts carry base58 strings built from 32-byte keys: valid kit `Address`es by construction. */
function asSeedAccounts(accounts: readonly WorldAccount[]): readonly SeedAccount[] {
  return accounts as unknown as readonly SeedAccount[];
}

export function createWorldHooks(options: WorldHooksOptions): WorldHooks {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  let assets: AssetIndex | undefined;
  let written: WrittenManifest | undefined;
  let traffic: (TrafficPlan & { runner?: TrafficRunner }) | undefined;

  return {
    seed({ chain, index }) {
      const started = performance.now();
      const cached = options.world.enabled
        ? loadOrBuildWorld(options.world.options, options.world.cacheDir)
        : undefined;
      const world = cached?.world;
      const das = createAssetIndex({ offchainJson: world?.offchainJson });
      assets = das;
      // Follow the chain: every account a transaction or a direct write touched is re-read.
      chain.onAccountsTouched(({ addresses, keys }) => {
        das.applyAccounts(
          addresses.map((address, i): [string, AccountView | null] => {
            const account = chain.executor.readAccount(address, keys[i]);
            return [address, account === null ? null : { owner: account.owner, data: account.data }];
          }),
        );
      });
      if (world !== undefined) {
        index.seedAccounts(asSeedAccounts(world.accounts));
        das.applyAccounts(world.accounts.map((a): [string, AccountView] => [a.address, a]));
        for (const asset of world.compressedAssets) das.addCompressed(asset);
        const dir = options.outDir ?? options.world.outDir ?? join(tmpdir(), `solgate-localnet-${process.pid}`);
        written = writeWorldFiles(world, dir);
        for (const line of summarize(written, (performance.now() - started) / 1000)) log(line);
        if (cached?.file !== undefined)
          log(
            `  world cache: ${cached.source === "hit" ? "read from" : "written to"} ${cached.file} (LOCALNET_WORLD_CACHE=off to rebuild every start)`,
          );
      }
      if (options.traffic.enabled) {
        traffic = planTraffic(options.traffic.options);
        index.seedAccounts(asSeedAccounts(traffic.accounts));
      }
    },
    extraMethods() {
      if (assets === undefined) throw new Error("world hooks: extraMethods called before seed");
      return [createDasMethods(assets)];
    },
    onStarted({ chain }) {
      if (traffic === undefined) return;
      const generator = createTrafficGenerator(traffic, options.traffic.options);
      traffic.runner = startTraffic(chain, generator, (err) => log(`traffic: transaction refused: ${String(err)}`));
      const o = options.traffic.options;
      log(
        `traffic: ${o.ratePerSlot} transactions per slot from ${traffic.wallets.length} wallets; hot accounts ${traffic.hot.join(", ")}`,
      );
    },
    get assets() {
      return assets;
    },
    get written() {
      return written;
    },
    get traffic() {
      return traffic;
    },
  };
}
