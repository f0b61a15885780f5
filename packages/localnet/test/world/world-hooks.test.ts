/**
 * The world hooks, eager and lazy: a lazy `seed` writes none of the world's accounts (only the traffic's),
 * and its `load` then leaves LiteSVM, the account index and the DAS index exactly as an eager `seed` does
 * (same accounts, byte for byte; same DAS records and collection listings), on real LiteSVM instances.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createAccountIndex, type AccountIndex } from "../../src/accounts/index.ts";
import { createChain } from "../../src/chain/chain.ts";
import { DEFAULT_LOCALNET_CONFIG } from "../../src/config.ts";
import { DEFAULT_TRAFFIC_OPTIONS } from "../../src/traffic/traffic-options.ts";
import { createWorldHooks, type WorldHooks } from "../../src/world/world-hooks.ts";
import { parseWorldConfig } from "../../src/world/world-options.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

interface Seeded {
  hooks: WorldHooks;
  index: AccountIndex;
  /** The chain's own accounts (sysvars, programs, its faucet and cluster, some random per chain). */
  own: Set<string>;
}

async function seeded(lazy: boolean, cacheDir = "off", lines: string[] = []): Promise<Seeded> {
  const chain = await createChain({ ...DEFAULT_LOCALNET_CONFIG, slotMs: 1_000_000 });
  const index = createAccountIndex(chain.svm);
  const own = new Set<string>([...index.all()].map((a) => a.address));
  const outDir = mkdtempSync(join(tmpdir(), "solgate-world-hooks-"));
  dirs.push(outDir);
  const hooks = createWorldHooks({
    world: parseWorldConfig({
      LOCALNET_COLLECTION_SIZE: "300",
      LOCALNET_TOKEN_HOLDERS: "2500",
      LOCALNET_SMALL_MINT_HOLDERS: "40,5",
      LOCALNET_WORLD_CACHE: cacheDir,
    }),
    traffic: { enabled: true, options: DEFAULT_TRAFFIC_OPTIONS },
    outDir,
    log: (line) => lines.push(line),
    lazy,
  });
  hooks.seed({ chain, index });
  return { hooks, index, own };
}

/** Every account the hooks indexed, as text, in address order. */
function contents({ index, own }: Seeded): string[] {
  return [...index.all()]
    .filter((a) => !own.has(a.address))
    .map((a) => `${a.address} ${a.owner} ${a.lamports} ${a.rentEpoch} ${Buffer.from(a.data).toString("hex")}`)
    .sort();
}

describe("world hooks", () => {
  it("loads lazily into exactly the state an eager seed leaves", async () => {
    const eager = await seeded(false);
    const lazy = await seeded(true);
    // Before its load, the lazy one holds the traffic's accounts alone (the collection traffic's among them).
    expect(contents(lazy)).toHaveLength(
      lazy.hooks.traffic!.accounts.length + lazy.hooks.collectionPlan!.accounts.length,
    );
    expect(contents(eager).length).toBeGreaterThan(3000);

    await lazy.hooks.load({ index: lazy.index } as never);
    expect(contents(lazy)).toEqual(contents(eager));

    // LiteSVM itself (not only the index's copies) holds the same accounts.
    for (const entry of [...eager.index.all()].filter((a) => !eager.own.has(a.address))) {
      const stored = lazy.index.store.read(entry.key);
      expect(stored === null ? null : Buffer.from(stored.data).toString("hex")).toBe(
        Buffer.from(entry.data).toString("hex"),
      );
    }

    // The DAS index: every collection lists the same members, each with the same record.
    const manifest = eager.hooks.written!.manifest;
    for (const collection of manifest.collections) {
      for (const includeUnverified of [false, true]) {
        const a = eager.hooks.assets!.groupMembers(collection.mint, includeUnverified);
        const b = lazy.hooks.assets!.groupMembers(collection.mint, includeUnverified);
        expect(b.map((r) => r.id)).toEqual(a.map((r) => r.id));
        expect(b.length).toBeGreaterThan(0);
      }
    }
    const owner = manifest.demoWallet.address;
    const strip = (records: readonly { id: string; updated?: number }[]) =>
      records.map(({ updated: _u, ...rest }) => JSON.stringify(rest, (_k, v) => (typeof v === "bigint" ? `${v}` : v)));
    expect(strip(lazy.hooks.assets!.ownedBy(owner))).toEqual(strip(eager.hooks.assets!.ownedBy(owner)));
    expect(lazy.hooks.assets!.ownedBy(owner).length).toBeGreaterThan(0);
  });

  it("loads lazily from a cached world's head and file into the same state", async () => {
    const cacheDir = mkdtempSync(join(tmpdir(), "solgate-world-hooks-cache-"));
    dirs.push(cacheDir);
    const eager = await seeded(false, cacheDir); // builds and writes the cache
    const lines: string[] = [];
    const lazy = await seeded(true, cacheDir, lines);
    expect(lines[0]).toMatch(/^world manifest read in [\d.]+ s, accounts loading in the background/);
    // The same manifest (but for where each wrote its keypair file).
    const manifestOf = ({ hooks }: Seeded) => ({
      ...hooks.written!.manifest,
      demoWallet: { ...hooks.written!.manifest.demoWallet, keypairFile: undefined },
    });
    expect(manifestOf(lazy)).toEqual(manifestOf(eager));
    expect(contents(lazy)).toHaveLength(
      lazy.hooks.traffic!.accounts.length + lazy.hooks.collectionPlan!.accounts.length,
    );
    await lazy.hooks.load({ index: lazy.index } as never);
    expect(contents(lazy)).toEqual(contents(eager));
    const mint = eager.hooks.written!.manifest.collections[0].mint;
    expect(lazy.hooks.assets!.groupMembers(mint, true).map((r) => r.id)).toEqual(
      eager.hooks.assets!.groupMembers(mint, true).map((r) => r.id),
    );
    // The off-chain JSON (read with the world file, after the DAS index was made) is there too.
    const uri = eager.hooks.assets!.groupMembers(mint, true)[0].metadata.uri.replace(/\0/gu, "").trim();
    expect(eager.hooks.assets!.offchain(uri)).toBeDefined();
    expect(lazy.hooks.assets!.offchain(uri)).toEqual(eager.hooks.assets!.offchain(uri));
  });

  it("has nothing left to load after an eager seed", async () => {
    const eager = await seeded(false);
    const before = contents(eager);
    await eager.hooks.load({ index: eager.index } as never);
    expect(contents(eager)).toEqual(before);
  });
});
