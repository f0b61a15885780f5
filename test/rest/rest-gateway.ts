/**
 * The real gateway (`startGateway`, as `npm start` runs it) on port 0 with its embedded localnet,
 * seeded with a small world (one generated collection, two fungible mints, a funded demo wallet)
 * and a fast clock, for the REST tests. Log lines are kept so tests can see what the interceptors did.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config.ts";
import { startGateway } from "../../src/main.ts";
import type { Gateway } from "../../src/main.ts";
import { createLogger } from "../../src/server/logger.ts";
import type { WorldManifest } from "@solgate/localnet";
import { createLogSink } from "../server/helpers.ts";

export const REST_API_KEY = "rest-test-key";

/** A running gateway on the localnet. */
export interface RestGateway {
  gateway: Gateway;
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** `<url>/v1/localnet` */
  base: string;
  /** Headers with the API key. */
  auth: Record<string, string>;
  manifest: WorldManifest;
  /** The demo wallet's 64-byte secret key (solana-cli format: secret then public key). */
  demoWalletSecret: Uint8Array;
  logs: Record<string, unknown>[];
  stop(): Promise<void>;
}

/** Localnet settings for the test world: small, fast, and passed to the localnet child through its environment. */
const LOCALNET_ENV: Record<string, string> = {
  LOCALNET_SLOT_MS: "50",
  LOCALNET_CONFIRM_SLOTS: "1",
  LOCALNET_FINALIZE_SLOTS: "6",
  LOCALNET_COLLECTION_SIZE: "7",
  LOCALNET_COMPRESSED_SHARE: "0.3",
  LOCALNET_NFT_OWNERS: "3",
  LOCALNET_SPOOFS: "2",
  LOCALNET_TOKEN_HOLDERS: "30",
  LOCALNET_SMALL_MINT_HOLDERS: "6,3",
  LOCALNET_REAL_ACCOUNTS: "1",
  // The collection stays as seeded (the tests count its members); the marketplace still lists it, unmoving.
  LOCALNET_COLLECTION_TRAFFIC: "0",
};

/** Starts the gateway with the localnet world; `stop()` ends both and removes the world folder. */
export async function startRestGateway(): Promise<RestGateway> {
  const worldDir = mkdtempSync(join(tmpdir(), "solgate-rest-world-"));
  // The launcher passes its own environment on to the localnet child.
  Object.assign(process.env, LOCALNET_ENV, { LOCALNET_WORLD_DIR: worldDir });
  const sink = createLogSink();
  const config = loadConfig({
    NODE_ENV: "test",
    PORT: "0",
    HOST: "127.0.0.1",
    METRICS_PORT: "0",
    SOLGATE_API_KEYS: REST_API_KEY,
    LOCALNET_WORLD: "1",
    LOCALNET_TRAFFIC: "1",
    SOLGATE_DEMO: "0",
  });
  const gateway = await startGateway(config, createLogger({ level: "info", destination: sink.stream }));
  const manifest = JSON.parse(readFileSync(join(worldDir, "world-manifest.json"), "utf8")) as WorldManifest;
  const secret = new Uint8Array(JSON.parse(readFileSync(join(worldDir, "demo-wallet.json"), "utf8")) as number[]);
  const url = `http://127.0.0.1:${gateway.port}`;
  return {
    gateway,
    url,
    base: `${url}/v1/localnet`,
    auth: { Authorization: `Bearer ${REST_API_KEY}` },
    manifest,
    demoWalletSecret: secret,
    logs: sink.lines,
    async stop() {
      await gateway.close();
      rmSync(worldDir, { recursive: true, force: true });
    },
  };
}
