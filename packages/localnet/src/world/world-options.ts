import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * World sizes and switches, with their defaults, and the parser that the localnet's config.ts
 * calls with its environment (nothing here reads process.env itself).
 */

/** Everything that shapes the seeded world; the same options and seed give the same bytes. */
export interface WorldOptions {
  /** Seed every address, amount and choice derives from. */
  seed: string;
  /** Verified members of the generated collection (account-based and compressed together). */
  collectionSize: number;
  /** Share of the collection that is compressed (DAS-only, no accounts). */
  compressedShare: number;
  /** Share of the account-based members that are programmable NFTs. */
  programmableShare: number;
  /** Wallets the generated NFTs are spread over. */
  nftOwners: number;
  /** NFTs naming the collection without being verified. */
  unverifiedSpoofs: number;
  /** Verified members of the look-alike collection (same name and symbol, other mint). */
  lookalikeMembers: number;
  /** Holders of the big fungible mint. */
  tokenHolders: number;
  /** Holders of each smaller fungible mint. */
  smallMintHolders: readonly number[];
  /** Load the real mainnet fixture accounts. */
  realAccounts: boolean;
  /** Lamports given to the demo wallet. */
  demoWalletLamports: bigint;
}

/** Where built worlds are cached by default (see world-cache.ts). */
export const DEFAULT_WORLD_CACHE_DIR = join(tmpdir(), "solgate-localnet-cache");

export const DEFAULT_WORLD_OPTIONS: WorldOptions = {
  seed: "solgate",
  collectionSize: 10_000,
  compressedShare: 0.1,
  programmableShare: 0.2,
  nftOwners: 2_500,
  unverifiedSpoofs: 40,
  lookalikeMembers: 25,
  tokenHolders: 100_000,
  smallMintHolders: [2_000, 300],
  realAccounts: true,
  demoWalletLamports: 1_000_000_000_000n,
};

/** Whether the world is seeded at all, plus its options. */
export interface WorldConfig {
  enabled: boolean;
  options: WorldOptions;
  /** Folder for the manifest and the demo keypair (LOCALNET_WORLD_DIR); default: a per-process temp folder. */
  outDir?: string;
  /**
   * Folder of the built-world cache (LOCALNET_WORLD_CACHE; world-cache.ts); default under the OS temp
   * dir; undefined (`LOCALNET_WORLD_CACHE=off`): always build.
   */
  cacheDir?: string;
}

/** The world's environment variables, option by option (the launcher sets them from its typed options). */
export const WORLD_ENV = {
  enabled: "LOCALNET_WORLD",
  seed: "LOCALNET_WORLD_SEED",
  collectionSize: "LOCALNET_COLLECTION_SIZE",
  compressedShare: "LOCALNET_COMPRESSED_SHARE",
  programmableShare: "LOCALNET_PROGRAMMABLE_SHARE",
  nftOwners: "LOCALNET_NFT_OWNERS",
  unverifiedSpoofs: "LOCALNET_SPOOFS",
  tokenHolders: "LOCALNET_TOKEN_HOLDERS",
  smallMintHolders: "LOCALNET_SMALL_MINT_HOLDERS",
  realAccounts: "LOCALNET_REAL_ACCOUNTS",
  dir: "LOCALNET_WORLD_DIR",
  cache: "LOCALNET_WORLD_CACHE",
} as const;

type Env = Readonly<Record<string, string | undefined>>;

function parseCount(env: Env, name: string, fallback: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!/^\d+$/u.test(raw) || Number(raw) > max) throw new Error(`${name} must be an integer 0-${max}, got "${raw}"`);
  return Number(raw);
}

function parseShare(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0 || value > 1) throw new Error(`${name} must be a number 0-1, got "${raw}"`);
  return value;
}

function parseSwitch(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (raw === "1" || raw === "true") return true;
  if (raw === "0" || raw === "false") return false;
  throw new Error(`${name} must be 0 or 1, got "${raw}"`);
}

/**
 * Reads the world's variables: LOCALNET_WORLD (0/1), LOCALNET_WORLD_SEED, LOCALNET_COLLECTION_SIZE,
 * LOCALNET_COMPRESSED_SHARE, LOCALNET_PROGRAMMABLE_SHARE, LOCALNET_NFT_OWNERS, LOCALNET_SPOOFS,
 * LOCALNET_TOKEN_HOLDERS, LOCALNET_SMALL_MINT_HOLDERS (comma list), LOCALNET_REAL_ACCOUNTS (0/1),
 * LOCALNET_WORLD_DIR (where the manifest and demo keypair are written).
 * `enabledByDefault` lets tests default to an empty chain while `npm start` seeds.
 */
export function parseWorldConfig(env: Env, enabledByDefault = true): WorldConfig {
  const d = DEFAULT_WORLD_OPTIONS;
  const spoofs = parseCount(env, WORLD_ENV.unverifiedSpoofs, d.unverifiedSpoofs, 100_000);
  const smallRaw = env[WORLD_ENV.smallMintHolders];
  const smallMintHolders =
    smallRaw === undefined || smallRaw === ""
      ? d.smallMintHolders
      : smallRaw
          .split(",")
          .map((part) =>
            parseCount({ [WORLD_ENV.smallMintHolders]: part.trim() }, WORLD_ENV.smallMintHolders, 0, 1_000_000),
          );
  return {
    enabled: parseSwitch(env, WORLD_ENV.enabled, enabledByDefault),
    outDir: env[WORLD_ENV.dir] || undefined,
    ...cacheDirOf(env[WORLD_ENV.cache]),
    options: {
      seed: env[WORLD_ENV.seed] || d.seed,
      collectionSize: parseCount(env, WORLD_ENV.collectionSize, d.collectionSize, 1_000_000),
      compressedShare: parseShare(env, WORLD_ENV.compressedShare, d.compressedShare),
      programmableShare: parseShare(env, WORLD_ENV.programmableShare, d.programmableShare),
      nftOwners: Math.max(1, parseCount(env, WORLD_ENV.nftOwners, d.nftOwners, 1_000_000)),
      unverifiedSpoofs: spoofs,
      lookalikeMembers: Math.min(spoofs, d.lookalikeMembers),
      tokenHolders: parseCount(env, WORLD_ENV.tokenHolders, d.tokenHolders, 2_000_000),
      smallMintHolders,
      realAccounts: parseSwitch(env, WORLD_ENV.realAccounts, d.realAccounts),
      demoWalletLamports: d.demoWalletLamports,
    },
  };
}

/** LOCALNET_WORLD_CACHE: a folder, `off` (no cache), or unset (the default folder). */
function cacheDirOf(raw: string | undefined): { cacheDir?: string } {
  if (raw === "off" || raw === "0") return {};
  return { cacheDir: raw === undefined || raw === "" ? DEFAULT_WORLD_CACHE_DIR : raw };
}
