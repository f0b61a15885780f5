/**
 * A localnet child process seeded with a small world (token holders of two mints, a few NFTs), and
 * its manifest, for tests and benchmarks of program-account listing.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startLocalnet } from "../../src/localnet/launcher.ts";
import type { LocalnetHandle } from "../../src/localnet/launcher.ts";
import type { WorldManifest } from "../../src/localnet/world/world-types.ts";

export interface SeededLocalnet {
  localnet: LocalnetHandle;
  manifest: WorldManifest;
  stop(): Promise<void>;
}

/** Starts a localnet whose big mint has `tokenHolders` holders and whose small mint has `smallHolders`. */
export async function startSeededLocalnet(options: { tokenHolders: number; smallHolders: number; startTimeoutMs?: number }): Promise<SeededLocalnet> {
  const dir = mkdtempSync(join(tmpdir(), "solgate-world-"));
  const localnet = await startLocalnet({
    startTimeoutMs: options.startTimeoutMs ?? 60_000,
    env: {
      NODE_ENV: "test",
      LOCALNET_WORLD: "1",
      LOCALNET_WORLD_DIR: dir,
      LOCALNET_TOKEN_HOLDERS: String(options.tokenHolders),
      LOCALNET_SMALL_MINT_HOLDERS: String(options.smallHolders),
      LOCALNET_COLLECTION_SIZE: "20",
      LOCALNET_NFT_OWNERS: "5",
      LOCALNET_SPOOFS: "0",
      LOCALNET_REAL_ACCOUNTS: "0",
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
