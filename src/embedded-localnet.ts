/**
 * The embedded localnet as the configuration describes it, started from its package, which is loaded only
 * when used: a deployment on remote chains never loads (nor installs) it. Kept apart from gateway.ts so that
 * main.ts can start it before loading the gateway's modules.
 */
import type { LocalnetHandle } from "@solgate/localnet";
import type { Config } from "./config.ts";

/** The localnet package, which a remote-only install (`npm ci --omit=dev --workspaces=false`) leaves out. */
async function importLocalnet(): Promise<typeof import("@solgate/localnet")> {
  try {
    return await import("@solgate/localnet");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ERR_MODULE_NOT_FOUND") throw err;
    throw new Error(
      "no remote chain is configured (SOLGATE_RPC_URL, SOLGATE_CHAINS_FILE) and the embedded localnet (@solgate/localnet) is not installed",
      { cause: err },
    );
  }
}

/** Starts the embedded localnet `config` describes. */
export async function startConfiguredLocalnet(config: Config): Promise<LocalnetHandle> {
  const { startLocalnet } = await importLocalnet();
  return startLocalnet({
    ...(config.localnet.port === undefined ? {} : { port: config.localnet.port }),
    logLevel: config.logLevel,
    world: config.localnet.world,
    traffic: config.localnet.traffic,
    // LOCALNET_GEYSER_PORT reaches the child only through this option: the launcher sets the child's port itself.
    geyser: geyserServer(config.localnet.geyserPort),
    // Building the default world (10,000 NFTs, 100,000 token holders) without its cache takes tens of
    // seconds on 2 cores; with it, the localnet answers within a second or two and writes it afterwards.
    startTimeoutMs: config.localnet.world ? 180_000 : 30_000,
    // The localnet prints what it seeded and where its manifest and demo keypair are: pass that on.
    onStderr: (text) => process.stderr.write(text),
  });
}

/** The localnet's Geyser server: on a free port by default, served even when the gateway does not follow it. */
function geyserServer(port: Config["localnet"]["geyserPort"]): boolean | { port: number } {
  if (port === "off") return false;
  return port === undefined ? true : { port };
}
