/**
 * What the localnet tells a person at start: the demo wallet's keypair file (solana-cli format),
 * a JSON manifest of every seeded address, and a short summary for the console.
 */
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { solanaCliKeypairJson } from "./seeded-random.ts";
import type { ManifestTraffic, World, WorldManifest } from "./world-types.ts";

export interface WrittenManifest {
  manifestPath: string;
  keypairPath: string;
  manifest: WorldManifest;
}

/** Writes atomically (temp file + rename): a reader never sees half a file. */
function writeAtomic(path: string, text: string, mode: number): void {
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, text, { mode });
  renameSync(temp, path);
}

/** Writes `demo-wallet.json` (mode 0600) and `world-manifest.json` into `dir`. */
export function writeWorldFiles(
  world: Pick<World, "demoWallet" | "manifest">,
  dir: string,
  traffic?: ManifestTraffic,
): WrittenManifest {
  mkdirSync(dir, { recursive: true });
  const keypairPath = join(dir, "demo-wallet.json");
  const manifestPath = join(dir, "world-manifest.json");
  writeAtomic(keypairPath, solanaCliKeypairJson(world.demoWallet), 0o600);
  const manifest: WorldManifest = {
    ...world.manifest,
    demoWallet: { ...world.manifest.demoWallet, keypairFile: keypairPath },
    ...(traffic === undefined ? {} : { traffic }),
  };
  writeAtomic(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`, 0o644);
  return { manifestPath, keypairPath, manifest };
}

/** The console summary: enough to start using the chain without opening the manifest. */
export function summarize(written: WrittenManifest, seconds: number): string[] {
  const m = written.manifest;
  const lines = [
    `world seeded in ${seconds.toFixed(1)} s: ${m.counts.accounts} accounts, ${m.counts.compressedAssets} compressed assets (seed "${m.seed}")`,
  ];
  for (const c of m.collections) {
    lines.push(
      `  collection ${c.name}: ${c.mint} (${c.verifiedMembers} verified members${c.seeded ? "" : ", real mainnet members"})`,
    );
  }
  lines.push(
    `  look-alike collection: ${m.spoofs.lookalikeCollection}; unverified spoofs: ${m.spoofs.unverifiedMembers.length}`,
  );
  for (const t of m.fungibleMints)
    lines.push(`  token ${t.symbol}: ${t.mint} (${t.holders} holders, ${t.decimals} decimals)`);
  lines.push(
    `  demo wallet: ${m.demoWallet.address} (${Number(BigInt(m.demoWallet.lamports) / 1_000_000_000n)} SOL), keypair ${written.keypairPath}`,
  );
  if (m.traffic !== undefined)
    lines.push(`  traffic "${m.traffic.profile}": hot accounts ${m.traffic.hotAccounts.join(", ")}`);
  lines.push(`  manifest: ${written.manifestPath}`);
  return lines;
}
