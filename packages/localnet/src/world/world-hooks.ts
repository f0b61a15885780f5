/**
 * Plugs the world, the DAS index and the background traffic into the localnet's seams
 * (localnet.ts `LocalnetHooks`): `seed` writes the world through the account index's bulk API and
 * builds the DAS index from the same accounts, then follows every account the chain touches;
 * `extraMethods` serves DAS; `onStarted` starts the traffic once the server listens.
 *
 * With `lazy`, `seed` only reads the cached world's head (its manifest and demo wallet; the whole world when
 * it is not cached yet, building it), writes the manifest and seeds the traffic's accounts; reading the world
 * file and the bulk (the world's accounts into LiteSVM, the account index and the DAS index, ~129,000
 * accounts in the default world) is left to `load`, which the localnet runs after it listens, in chunks
 * that let the slot clock and the RPC server run in between. The localnet holds every call that could see
 * a world account until `load` has finished (localnet.ts), so no answer shows a half-seeded world.
 */
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AccountIndex, SeedAccount } from "../accounts/index.ts";
import type { Chain } from "../chain/chain.ts";
import { createAssetIndex, type AccountView, type AssetIndex } from "../das/asset-index.ts";
import { createDasMethods } from "../das/das-methods.ts";
import type { MethodTable } from "../rpc/protocol.ts";
import {
  createTrafficGenerator,
  planTraffic,
  type TrafficGenerator,
  type TrafficPlan,
} from "../traffic/traffic-generator.ts";
import type { TrafficConfig } from "../traffic/traffic-options.ts";
import { startTraffic, type TrafficRunner } from "../traffic/traffic-runner.ts";
import { summarize, writeWorldFiles, type WrittenManifest } from "./manifest.ts";
import { loadOrBuildWorld, readCachedHead, type CachedWorld } from "./world-cache.ts";
import type { WorldConfig } from "./world-options.ts";
import type { CompressedAsset, OffchainJson, WorldAccount } from "./world-types.ts";
import { decodeTransaction } from "../wire/decode-transaction.ts";
import { TOKEN_METADATA_PROGRAM, TOKEN_PROGRAM } from "./program-ids.ts";
import type { Route } from "../rpc/server.ts";
import { createMarketplace, type Marketplace } from "../market/marketplace.ts";
import {
  createCollectionTraffic,
  planCollectionTraffic,
  DEFAULT_COLLECTION_TRAFFIC,
  TREE_BUFFER,
  TREE_CANOPY,
  TREE_DEPTH,
  type CollectionTraffic,
  type CollectionTrafficPlan,
} from "../traffic/collection-traffic.ts";
import { leafHash, type CompressedLeaf } from "../programs/bubblegum-program.ts";
import { METADATA_KEY, type TokenMetadata } from "./token-metadata.ts";
import { deriveKey } from "./seeded-random.ts";
import bs58 from "bs58";
import { MINT_SIZE } from "./spl-token-layout.ts";

/** The part of the localnet these hooks use (a structural subset of localnet.ts's `LocalnetWorld`). */
export interface HookWorld {
  chain: Pick<Chain, "onAccountsTouched" | "onBlock" | "submit" | "executor" | "block" | "slotAt"> &
    Partial<Pick<Chain, "programs" | "native">>;
  index: Pick<AccountIndex, "seedAccounts">;
}

export interface WorldHooksOptions {
  world: WorldConfig;
  traffic: TrafficConfig;
  /** Where the manifest and demo keypair go; defaults to a per-process folder under the OS temp dir. */
  outDir?: string;
  log?: (line: string) => void;
  /** Leave the world's accounts to `load` (see the module comment); default false: `seed` writes them all. */
  lazy?: boolean;
}

/** Hooks plus what they built, for tests and the composition root. */
export interface WorldHooks {
  seed(world: HookWorld): void;
  /** Writes what a lazy `seed` left (resolves at once otherwise); the localnet runs it once it listens. */
  load(world: HookWorld): Promise<void>;
  extraMethods(world: HookWorld): MethodTable[];
  onStarted(world: HookWorld): void;
  /** The DAS index (exists once `seed` ran, world or not). */
  readonly assets: AssetIndex | undefined;
  readonly written: WrittenManifest | undefined;
  readonly traffic: (TrafficPlan & { runner?: TrafficRunner }) | undefined;
  /** Scales the background traffic's prices from now on (see TrafficGenerator.priceScale); returns the scale. */
  setTrafficPriceScale(scale: number): number;
  /** The collection traffic (when it runs: traffic on, world on, LOCALNET_COLLECTION_TRAFFIC above 0). */
  readonly collectionTraffic: CollectionTraffic | undefined;
  /** The marketplace (with the collection traffic). */
  readonly marketplace: Marketplace | undefined;
  /** The collection traffic's keys and the accounts it seeded. */
  readonly collectionPlan: CollectionTrafficPlan | undefined;
  /** Its routes on the localnet's port. */
  extraRoutes(): Record<string, Route>;
}

/** The world's collection as the marketplace lists it (a Magic Eden symbol). */
export const SENTINELS_SYMBOL = "solgate_sentinels";

/** World accounts carry base58 strings built from 32-byte keys: valid kit `Address`es by construction. */
function asSeedAccounts(accounts: readonly WorldAccount[]): readonly SeedAccount[] {
  return accounts as unknown as readonly SeedAccount[];
}

/** How long one chunk of a lazy load may hold the event loop before it lets the clock and the server run. */
const LOAD_SLICE_MS = 15;
/** Accounts written between two looks at the clock. */
const LOAD_STEP = 250;

/** The DAS index's order within one `applyAccounts` call (metadata, then mints, then the rest), made explicit. */
function dasOrder(accounts: readonly WorldAccount[]): WorldAccount[] {
  const metadata: WorldAccount[] = [];
  const mints: WorldAccount[] = [];
  const rest: WorldAccount[] = [];
  for (const a of accounts) {
    if (a.owner === TOKEN_METADATA_PROGRAM) metadata.push(a);
    else if (a.owner === TOKEN_PROGRAM && a.data.length === MINT_SIZE) mints.push(a);
    else rest.push(a);
  }
  return [...metadata, ...mints, ...rest];
}

/** Runs `step(from, to)` over `[0, total)` in slices of at most {@link LOAD_SLICE_MS}, yielding between them. */
async function inSlices(total: number, step: (from: number, to: number) => void): Promise<void> {
  let from = 0;
  while (from < total) {
    const sliceStart = performance.now();
    while (from < total && performance.now() - sliceStart < LOAD_SLICE_MS) {
      const to = Math.min(total, from + LOAD_STEP);
      step(from, to);
      from = to;
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
}

export function createWorldHooks(options: WorldHooksOptions): WorldHooks {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  let assets: AssetIndex | undefined;
  let written: WrittenManifest | undefined;
  let traffic: (TrafficPlan & { runner?: TrafficRunner; generator?: TrafficGenerator }) | undefined;
  /** What a lazy `seed` left to `load`: the world if it was read already, and the DAS index's JSON map. */
  let pending: { cached: CachedWorld | undefined; offchainJson: Map<string, OffchainJson> } | undefined;
  let collectionPlan: CollectionTrafficPlan | undefined;
  let collectionTraffic: CollectionTraffic | undefined;
  let marketplace: Marketplace | undefined;
  /** Settles when every world account is written: the collection traffic waits for its collection. */
  let worldLoaded!: () => void;
  const loadedOnce = new Promise<void>((resolve) => {
    worldLoaded = resolve;
  });

  return {
    seed({ chain, index }) {
      const started = performance.now();
      const { enabled, options: worldOptions, cacheDir } = options.world;
      const lazy = options.lazy === true;
      // Lazy, with the world cached: its head (manifest, demo wallet) now, the world file itself in `load`.
      const head = enabled && lazy ? readCachedHead(worldOptions, cacheDir) : undefined;
      const cached = enabled && head === undefined ? loadOrBuildWorld(worldOptions, cacheDir) : undefined;
      // Read by DAS at query time only: filled by `load` when the world is read there.
      const offchainJson = cached?.world.offchainJson ?? new Map<string, OffchainJson>();
      const das = createAssetIndex({ offchainJson });
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
      if (options.traffic.enabled) traffic = planTraffic(options.traffic.options);
      const shown = head ?? cached?.world;
      if (shown !== undefined) {
        if (lazy) {
          pending = { cached, offchainJson };
        } else if (cached !== undefined) {
          const { world } = cached;
          index.seedAccounts(asSeedAccounts(world.accounts));
          das.applyAccounts(world.accounts.map((a): [string, AccountView] => [a.address, a]));
          for (const asset of world.compressedAssets) das.addCompressed(asset);
        }
        const dir = options.outDir ?? options.world.outDir ?? join(tmpdir(), `solgate-localnet-${process.pid}`);
        written = writeWorldFiles(
          shown,
          dir,
          traffic && {
            profile: options.traffic.options.profile,
            ratePerSlot: options.traffic.options.ratePerSlot,
            hotAccounts: traffic.hot,
            wallets: traffic.wallets.map((w) => w.address),
          },
        );
        const lines = summarize(written, (performance.now() - started) / 1000);
        if (lazy)
          lines[0] = lines[0].replace(
            /^world seeded in ([\d.]+ s)/,
            `world ${head === undefined ? "read" : "manifest read"} in $1, accounts loading in the background`,
          );
        for (const line of lines) log(line);
        const file = head?.file ?? cached?.file;
        if (file !== undefined)
          log(
            `  world cache: ${head !== undefined || cached?.source === "hit" ? "read from" : "written to"} ${file} (LOCALNET_WORLD_CACHE=off to rebuild every start)`,
          );
      }
      if (traffic !== undefined) index.seedAccounts(asSeedAccounts(traffic.accounts));
      const collectionOps = options.traffic.options.collectionOpsPerSlot;
      if (traffic !== undefined && enabled && collectionOps > 0 && chain.programs !== undefined && chain.native) {
        const native = chain.native;
        const collectionOptions = {
          ...DEFAULT_COLLECTION_TRAFFIC,
          worldSeed: worldOptions.seed,
          seed: options.traffic.options.seed,
          opsPerSlot: collectionOps,
        };
        collectionPlan = planCollectionTraffic(collectionOptions, (size) =>
          native.minimumBalanceForRentExemption(BigInt(size)),
        );
        index.seedAccounts(asSeedAccounts(collectionPlan.accounts));
        chain.programs.bubblegum.addTree(bs58.encode(collectionPlan.tree), TREE_DEPTH, TREE_BUFFER, TREE_CANOPY);
        const authority = collectionPlan.collectionAuthority;
        // Compressed assets have no accounts: DAS follows Bubblegum's leaves as an indexer follows its events.
        chain.programs.registry.onEvent((event) => {
          if (event.kind === "compressed-leaf") das.addCompressed(compressedAsset(event.leaf, authority));
        });
        collectionTraffic = createCollectionTraffic(collectionPlan, collectionOptions, chain.programs.bubblegum);
      }
      // The marketplace runs with the traffic; with no collection traffic its listings stay as they start.
      if (traffic !== undefined && enabled) {
        const mint = bs58.encode(deriveKey(worldOptions.seed, "collection/mint"));
        marketplace = createMarketplace({
          seed: options.traffic.options.seed,
          collections: [{ symbol: SENTINELS_SYMBOL, mint }],
          members: (group) => das.groupMembers(group, false),
          isMember: (group, id) => {
            const record = das.get(id);
            return record?.listedIn?.group === group && record.listedIn.verified;
          },
          changesPerSlot: collectionOps,
        });
        // Its first listings as soon as the collection is written, before any block: a first read finds a floor.
        const market = marketplace;
        void loadedOnce.then(() => market.step());
      }
      if (!lazy || pending === undefined) worldLoaded();
    },
    async load({ index }) {
      const das = assets;
      if (pending === undefined || das === undefined) return;
      const { cached: known, offchainJson } = pending;
      pending = undefined;
      const started = performance.now();
      // The same options and code give the same world (a missing or damaged file is rebuilt, identically).
      const { world, keys } = known ?? loadOrBuildWorld(options.world.options, options.world.cacheDir);
      if (known === undefined) for (const [uri, json] of world.offchainJson) offchainJson.set(uri, json);
      // By key, not by address: the index takes the bytes as they are (no base58 decoding).
      const accounts = world.accounts.map(
        (a, i): SeedAccount => ({
          address: keys.subarray(i * 32, i * 32 + 32),
          owner: a.owner as SeedAccount["owner"],
          lamports: a.lamports,
          data: a.data,
        }),
      );
      await inSlices(accounts.length, (from, to) =>
        index.seedAccounts(accounts.slice(from, to), { sort: to === accounts.length }),
      );
      const ordered = dasOrder(world.accounts);
      await inSlices(ordered.length, (from, to) =>
        das.applyAccounts(ordered.slice(from, to).map((a): [string, AccountView] => [a.address, a])),
      );
      for (const asset of world.compressedAssets) das.addCompressed(asset);
      log(
        `world loaded in ${((performance.now() - started) / 1000).toFixed(1)} s: ${world.accounts.length} accounts written, calls that read them answered from now on`,
      );
      worldLoaded();
    },
    extraMethods() {
      if (assets === undefined) throw new Error("world hooks: extraMethods called before seed");
      return [createDasMethods(assets)];
    },
    onStarted({ chain }) {
      if (traffic === undefined) return;
      const generator = createTrafficGenerator(traffic, options.traffic.options);
      traffic.generator = generator;
      traffic.runner = startTraffic(
        chain,
        generator,
        (err) => log(`traffic: transaction refused: ${String(err)}`),
        chain.block(chain.slotAt("processed")),
      );
      const o = options.traffic.options;
      log(
        `traffic "${o.profile}": ${o.ratePerSlot} transactions per slot from ${traffic.wallets.length} wallets; hot accounts ${traffic.hot.join(", ")}`,
      );
      const collection = collectionTraffic;
      const market = marketplace;
      if (market === undefined) return;
      // The collection must be written before anything verifies into it (or is listed).
      void loadedOnce.then(() => {
        chain.onBlock((block) => {
          market.step();
          if (collection === undefined) return;
          collection.landed(
            block.transactions.map((t) => ({ signature: t.signature, failed: t.outcome.err !== null })),
          );
          for (const wire of collection.next(block.blockhash)) {
            try {
              chain.submit(decodeTransaction(wire));
            } catch (err) {
              log(`collection traffic: transaction refused: ${String(err)}`);
            }
          }
        });
        if (collection !== undefined)
          log(
            `collection traffic: about ${o.collectionOpsPerSlot} operations per slot on ${SENTINELS_SYMBOL} (mints, spoofs, transfers, burns, verify/unverify, classic and compressed); marketplace stats at /v2/collections/${SENTINELS_SYMBOL}/stats`,
          );
      });
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
    get collectionTraffic() {
      return collectionTraffic;
    },
    get marketplace() {
      return marketplace;
    },
    get collectionPlan() {
      return collectionPlan;
    },
    extraRoutes() {
      return marketplace?.routes() ?? {};
    },
    setTrafficPriceScale(scale) {
      if (traffic?.generator === undefined) throw new Error("no background traffic runs (LOCALNET_TRAFFIC is off)");
      traffic.generator.priceScale = scale;
      return traffic.generator.priceScale;
    },
  };
}

/** A Bubblegum leaf as the DAS index holds a compressed asset. */
function compressedAsset(leaf: CompressedLeaf, updateAuthority: string): CompressedAsset {
  const m = leaf.metadata;
  const metadata: TokenMetadata = {
    key: METADATA_KEY,
    updateAuthority: updateAuthority as TokenMetadata["updateAuthority"],
    mint: leaf.id as TokenMetadata["mint"],
    name: m.name,
    symbol: m.symbol,
    uri: m.uri,
    sellerFeeBasisPoints: m.sellerFeeBasisPoints,
    creators: m.creators as TokenMetadata["creators"],
    primarySaleHappened: m.primarySaleHappened,
    isMutable: m.isMutable,
    editionNonce: m.editionNonce,
    tokenStandard: m.tokenStandard,
    collection: m.collection as TokenMetadata["collection"],
    uses: m.uses,
    collectionDetails: null,
    programmableConfig: null,
  };
  return {
    id: leaf.id,
    tree: leaf.tree,
    leafIndex: Number(leaf.nonce),
    seq: Number(leaf.seq),
    owner: leaf.owner,
    delegate: leaf.delegate === leaf.owner ? null : leaf.delegate,
    metadata,
    dataHash: bs58.encode(leaf.dataHash),
    creatorHash: bs58.encode(leaf.creatorHash),
    assetHash: bs58.encode(
      leafHash({
        id: bs58.decode(leaf.id),
        owner: bs58.decode(leaf.owner),
        delegate: bs58.decode(leaf.delegate),
        nonce: leaf.nonce,
        dataHash: leaf.dataHash,
        creatorHash: leaf.creatorHash,
      }),
    ),
    burnt: leaf.burnt,
  };
}
