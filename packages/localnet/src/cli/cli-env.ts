/**
 * The command's environment: solana-test-validator's defaults (ledger `test-ledger`, PubSub on the RPC
 * port + 1, no world, no traffic), then the caller's LOCALNET_* variables, then the flags.
 */
import { LOCALNET_ENV } from "../config.ts";
import { TRAFFIC_ENV } from "../traffic/traffic-options.ts";
import { WORLD_ENV } from "../world/world-options.ts";

/** The environment the process runs with: the command's defaults, then the caller's variables, then the flags. */
export function commandEnv(callerEnv: NodeJS.ProcessEnv, flagEnv: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    [WORLD_ENV.enabled]: "0",
    [TRAFFIC_ENV.enabled]: "0",
    [LOCALNET_ENV.ledgerDir]: "test-ledger",
    ...callerEnv,
    ...flagEnv,
  };
  if (env[LOCALNET_ENV.pubsubPort] === undefined) {
    const port = Number(env[LOCALNET_ENV.port] || 8899);
    // agave's PubSub port is the RPC port + 1; a bad LOCALNET_PORT is reported by config.ts.
    if (Number.isInteger(port) && port >= 0 && port < 65535)
      env[LOCALNET_ENV.pubsubPort] = String(port === 0 ? 0 : port + 1);
  }
  return env;
}
