/**
 * Solgate for the calibration bench when it measures the rule's margin (BENCH_CONFIDENCE): the gateway as
 * src/main.ts starts it (configuration from the environment), with the odds' `confidence` (fee-odds.ts) set from
 * the first argument. The margin is not a setting users have (no environment variable); this process is how the
 * bench varies it while still driving Solgate from outside, over HTTP.
 */
import { loadConfig } from "../../src/config.ts";
import { startGateway } from "../../src/main.ts";
import { createLogger } from "../../src/server/logger.ts";

const confidence = Number(process.argv[2]);
if (!(confidence >= 0)) throw new RangeError(`confidence must be a number of at least 0, got ${process.argv[2]}`);
const config = loadConfig();
// Through the bench's own wiring (GatewayExtras), not the production Config: users have no such setting.
const gateway = await startGateway(config, createLogger({ level: config.logLevel }), {
  feeMarket: { oddsConfidence: confidence },
});
for (const signal of ["SIGTERM", "SIGINT"] as const)
  process.once(signal, () => void gateway.close().finally(() => process.exit(0)));
