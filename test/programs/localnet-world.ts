/**
 * A localnet child process seeded with a small world (token holders of two mints, a few NFTs), and
 * its manifest, for tests and benchmarks of program-account listing.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startLocalnet } from "@solgate/localnet";
import type { LocalnetHandle } from "@solgate/localnet";
import type { WorldManifest } from "@solgate/localnet";

export interface SeededLocalnet {
  localnet: LocalnetHandle;
  manifest: WorldManifest;
  stop(): Promise<void>;
}

/** Starts a localnet whose big mint has `tokenHolders` holders and whose small mint has `smallHolders`. */
export async function startSeededLocalnet(options: {
  tokenHolders: number;
  smallHolders: number;
  startTimeoutMs?: number;
}): Promise<SeededLocalnet> {
  const dir = mkdtempSync(join(tmpdir(), "solgate-world-"));
  const localnet = await startLocalnet({
    startTimeoutMs: options.startTimeoutMs ?? 60_000,
    world: {
      dir,
      tokenHolders: options.tokenHolders,
      smallMintHolders: [options.smallHolders],
      collectionSize: 20,
      nftOwners: 5,
      unverifiedSpoofs: 0,
      realAccounts: false,
    },
  });
  const manifest = JSON.parse(readFileSync(join(dir, "world-manifest.json"), "utf8")) as WorldManifest;
  return {
    localnet,
    manifest,
    async stop() {
      await localnet.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
