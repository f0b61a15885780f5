/**
 * `solgate-localnet`, the package's command (bin/solgate-localnet.js starts it): the localnet started
 * as solana-test-validator is, from its flags (command-line.ts). Like solana-test-validator it
 * listens on 8899 with PubSub on 8900, keeps its keys and log in `test-ledger/`, and starts with an
 * empty chain (no world, no traffic) unless LOCALNET_WORLD / LOCALNET_TRAFFIC say otherwise.
 */
import { LOCALNET_ENV } from "../config.ts";
import { API_VERSION } from "../rpc/params.ts";
import { runLocalnet } from "../run.ts";
import { commandEnv } from "./cli-env.ts";
import { CommandLineError, helpText, parseCommandLine } from "./command-line.ts";

const NAME = "solgate-localnet";
const PACKAGE_VERSION = "0.1.0";

function main(args: string[]): Promise<void> | void {
  let command;
  try {
    command = parseCommandLine(args);
  } catch (e) {
    if (!(e instanceof CommandLineError)) throw e;
    process.stderr.write(`${NAME}: ${e.message}\n`);
    process.exit(2);
  }
  if (command.kind === "help") {
    process.stdout.write(`${helpText(`${PACKAGE_VERSION} (agave ${API_VERSION})`)}\n`);
    return;
  }
  if (command.kind === "version") {
    process.stdout.write(`${NAME} ${PACKAGE_VERSION} (agave ${API_VERSION})\n`);
    return;
  }
  const env = commandEnv(process.env, command.env);
  if (env[LOCALNET_ENV.quiet] !== "1") for (const note of command.notes) process.stderr.write(`${NAME}: ${note}\n`);
  return runLocalnet(env, { style: "command", name: NAME });
}

await main(process.argv.slice(2));
