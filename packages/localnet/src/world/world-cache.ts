/**
 * The built world, cached on disk. Building the default world (129,000 accounts, 100,000 of them token
 * holders, each address derived by hashing) is most of a start's time; the same options and the same
 * world code always build the same bytes (world-builder.ts), so the result is kept in one file per
 * (world code version, options) and read back on the next start instead of being rebuilt.
 *
 * - Key: SHA-256 of every file under src/world/ (code and fixtures) and of the options. Changing either
 *   builds anew; files of an older code version are deleted when a new one is written.
 * - Where: `<dir>/world-<code>-<options>.v8`, dir `LOCALNET_WORLD_CACHE` (default
 *   `<OS temp dir>/solgate-localnet-cache`; `off` disables the cache).
 * - Format: `v8.serialize` of the world (structured clone keeps the Uint8Arrays and bigints), less the
 *   demo wallet's KeyObject, which is rebuilt from its seed, plus every account's 32-byte key. Written to a
 *   temp file, then renamed, so a reader never sees half a file; an unreadable file is treated as a miss and
 *   rebuilt.
 * - Beside it, `<same name>.head.v8`: the manifest and the demo wallet's seed alone (a few kB), written after
 *   the world file, so that a start can print and write the manifest at once and read the accounts later
 *   (`readCachedHead`; world-hooks.ts's lazy seed).
 * - The accounts come in key byte order, with their keys beside them: what the account index wants (its
 *   buckets are then filled in order, so sorting them is one linear pass, and no address is base58-decoded).
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import v8 from "node:v8";
import bs58 from "bs58";
import { buildWorld } from "./world-builder.ts";
import type { WorldOptions } from "./world-options.ts";
import type { World } from "./world-types.ts";
import { keypairFromSeed } from "./seeded-random.ts";

/** How the world was obtained, for the start-up line. */
export interface CachedWorld {
  /** The world, its accounts in key byte order. */
  world: World;
  /** The accounts' 32-byte keys, one after another, in the order of `world.accounts`. */
  keys: Uint8Array;
  /** "hit": read from `file`; "built": built (and written to `file` unless the cache is off). */
  source: "hit" | "built";
  file?: string;
}

let codeVersion: string | undefined;

/** A digest of every file of the world's code and fixtures (computed once per process). */
export function worldCodeVersion(): string {
  if (codeVersion !== undefined) return codeVersion;
  const hash = createHash("sha256");
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else hash.update(name).update(readFileSync(path));
    }
  };
  walk(import.meta.dirname);
  codeVersion = hash.digest("hex").slice(0, 16);
  return codeVersion;
}

function optionsKey(options: WorldOptions): string {
  const text = JSON.stringify(options, (_k, v: unknown) => (typeof v === "bigint" ? `${v}n` : v));
  return createHash("sha256").update(text).digest("hex").slice(0, 16);
}

/** What a start needs before the accounts: the manifest and the demo wallet (the cache's head file). */
export type WorldHead = Pick<World, "manifest" | "demoWallet"> & { file: string };

function cacheFile(options: WorldOptions, dir: string): string {
  return join(dir, `world-${worldCodeVersion()}-${optionsKey(options)}.v8`);
}

const headOf = (file: string) => file.replace(/\.v8$/, ".head.v8");

/** The head of the cached world for `options`, if there is one (its world file is read by `loadOrBuildWorld`). */
export function readCachedHead(options: WorldOptions, dir: string | undefined): WorldHead | undefined {
  if (dir === undefined) return undefined;
  const file = cacheFile(options, dir);
  try {
    const head = v8.deserialize(readFileSync(headOf(file))) as Pick<World, "manifest"> & {
      demoWallet: { secretSeed: Uint8Array };
    };
    if (!existsSync(file)) return undefined;
    return { manifest: head.manifest, demoWallet: keypairFromSeed(new Uint8Array(head.demoWallet.secretSeed)), file };
  } catch {
    return undefined;
  }
}

/** A built world with its accounts in key byte order, and their keys. */
function keyed(built: World): { world: World; keys: Uint8Array } {
  const decoded = built.accounts.map((account) => ({ account, key: bs58.decode(account.address) }));
  decoded.sort((a, b) => Buffer.compare(a.key, b.key));
  const keys = new Uint8Array(decoded.length * 32);
  decoded.forEach(({ key }, i) => {
    if (key.length !== 32) throw new Error(`world account address is not 32 bytes: ${bs58.encode(key)}`);
    keys.set(key, i * 32);
  });
  return { world: { ...built, accounts: decoded.map(({ account }) => account) }, keys };
}

/** The world for `options`: from `dir` if cached there, else built (and cached). `dir` undefined: no cache. */
export function loadOrBuildWorld(options: WorldOptions, dir: string | undefined): CachedWorld {
  if (dir === undefined) return { ...keyed(buildWorld(options)), source: "built" };
  const code = worldCodeVersion();
  const file = cacheFile(options, dir);
  try {
    const { keys, ...stored } = v8.deserialize(readFileSync(file)) as Omit<World, "demoWallet"> & {
      demoWallet: { secretSeed: Uint8Array };
      keys: Uint8Array;
    };
    if (!(keys instanceof Uint8Array) || keys.length !== stored.accounts.length * 32) throw new Error("bad keys");
    return {
      world: { ...stored, demoWallet: keypairFromSeed(new Uint8Array(stored.demoWallet.secretSeed)) },
      keys,
      source: "hit",
      file,
    };
  } catch {
    // Missing or unreadable: build it.
  }
  const { world, keys } = keyed(buildWorld(options));
  try {
    mkdirSync(dir, { recursive: true });
    for (const name of readdirSync(dir)) {
      if (name.startsWith("world-") && !name.startsWith(`world-${code}-`)) rmSync(join(dir, name), { force: true });
    }
    const { privateKey: _key, ...demoWallet } = world.demoWallet;
    const temp = `${file}.${process.pid}.tmp`;
    writeFileSync(temp, v8.serialize({ ...world, demoWallet, keys }));
    renameSync(temp, file);
    writeFileSync(temp, v8.serialize({ manifest: world.manifest, demoWallet }));
    renameSync(temp, headOf(file));
  } catch {
    // A cache that cannot be written costs the next start a rebuild, nothing more.
    return { world, keys, source: "built" };
  }
  return { world, keys, source: "built", file };
}
