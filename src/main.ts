/**
 * The gateway as a process: reads the configuration, starts the embedded localnet when no remote chain is
 * configured (first, so that its start-up overlaps the loading of the gateway's modules), starts the
 * gateway (gateway.ts), prints the banner, and drains and exits on SIGTERM/SIGINT.
 */
import { loadConfig } from "./config.ts";
import type { Config } from "./config.ts";
import { createLogger } from "./server/logger.ts";
import { startConfiguredLocalnet } from "./embedded-localnet.ts";
import type { Gateway, GatewayExtras } from "./gateway.ts";
import type { Logger } from "./server/logger.ts";

export type { Gateway, GatewayExtras } from "./gateway.ts";

/** Starts everything `config` describes (gateway.ts's {@link import("./gateway.ts").startGateway}, loaded on use). */
export async function startGateway(config: Config, logger: Logger, extras: GatewayExtras = {}): Promise<Gateway> {
  const gateway = await import("./gateway.ts");
  return gateway.startGateway(config, logger, extras);
}

/** What a developer needs to try the gateway on the localnet. */
function banner(gateway: Gateway, keyGenerated: boolean): string {
  const everywhere = gateway.host === "0.0.0.0" || gateway.host === "::";
  const hostInUrl = everywhere ? "127.0.0.1" : gateway.host.includes(":") ? `[${gateway.host}]` : gateway.host;
  const url = `http://${hostInUrl}:${gateway.port}`;
  const bound = everywhere ? `every interface (${gateway.host}), port ${gateway.port}` : url;
  const key = gateway.apiKeys[0];
  return [
    "",
    `Solgate is listening on ${bound} (gRPC, gRPC-Web, Connect, REST); metrics on 127.0.0.1:${gateway.metricsPort}/metrics`,
    `Started in ${process.uptime().toFixed(1)} s (the seeded world is cached on disk and its accounts finish loading in the background: calls that read them wait for it, /readyz is ready once done; see packages/localnet/README.md)`,
    ...(everywhere
      ? [
          "WARNING: the port is reachable from other machines, and the API key below is printed; set HOST=127.0.0.1 to keep it local",
        ]
      : []),
    `Chain "localnet" is the embedded localnet at ${gateway.localnetUrl}`,
    `API key${keyGenerated ? " (generated for this run; set SOLGATE_API_KEYS to choose one)" : ""}: ${key}`,
    "Try:",
    `  npx buf curl --http2-prior-knowledge --list-services ${url}`,
    `  npx buf curl --protocol grpc --http2-prior-knowledge -H "Authorization: Bearer ${key}" \\`,
    `    ${url}/solgate.v1.FeeService/GetFees`,
    `  curl -H "Authorization: Bearer ${key}" ${url}/v1/localnet/network/fees`,
    ...(gateway.demo ? [`  open ${url}/demo/ for a live view of fees and transactions`] : []),
    "",
  ].join("\n");
}

/** The longest shutdown waits for its log lines to be written out. */
const LOG_FLUSH_TIMEOUT_MS = 3000;

/** Runs the gateway as a process: exits 0 after a clean drain, 1 on a start failure or a dead localnet. */
async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n`);
    process.exit(2);
  }
  const logger = createLogger({ level: config.logLevel });
  for (const warning of config.warnings) logger.warn({ production: config.production }, warning);
  let gateway: Gateway;
  try {
    // The localnet child starts now; the gateway's modules load while it does.
    const localnet = config.localnet.enabled ? startConfiguredLocalnet(config) : undefined;
    gateway = await startGateway(config, logger, localnet === undefined ? {} : { localnet });
  } catch (err) {
    logger.fatal({ err }, "solgate failed to start");
    process.exit(1);
  }
  if (config.localnet.enabled) process.stderr.write(banner(gateway, config.apiKeys.length === 0));

  let stopping = false;
  const stop = async (reason: string, exitCode: number) => {
    if (stopping) return;
    stopping = true;
    logger.info({ reason }, "shutting down");
    await gateway.close();
    // Written out while the event loop can still wait for a slow reader; what is left goes in the exit
    // hook's synchronous flush (see createStdoutDestination).
    await new Promise<void>((resolve) => {
      setTimeout(resolve, LOG_FLUSH_TIMEOUT_MS).unref();
      logger.flush(() => resolve());
    });
    process.exit(exitCode);
  };
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.on(signal, () => {
      // A second signal means "now".
      if (stopping) process.exit(1);
      void stop(signal, 0);
    });
  }
  void gateway.localnetExited.then((how) => {
    if (stopping) return;
    logger.fatal({ exit: how }, "the localnet exited; the gateway cannot serve chain localnet");
    void stop("localnet exited", 1);
  });
}

if (import.meta.main) await main();
