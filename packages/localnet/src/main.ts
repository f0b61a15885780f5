/**
 * The localnet process: reads its configuration from the environment, starts the chain and the
 * JSON-RPC server, prints one JSON ready line on stdout (`{"event":"ready","rpcUrl":...}`) and a
 * human line on stderr, and exits cleanly on SIGTERM/SIGINT (or when stdin closes, if launched).
 *
 * `npm run localnet` runs it alone; `launcher.ts` runs it as a child process.
 */
import { loadLocalnetConfig, type LocalnetConfig } from "./config.ts";
import { startLocalnetInProcess, type LocalnetHooks } from "./localnet.ts";
import { createWorldHooks } from "./world/world-hooks.ts";

/** The hooks this process runs with; later issues (world seeding, DAS, traffic) plug in here. */
function hooks(config: LocalnetConfig): LocalnetHooks {
  const { accountDirs, accounts, programs } = config.loading;
  return {
    ...createWorldHooks({
      world: config.world,
      traffic: config.traffic,
      // The world's accounts are written after the server answers (calls that could see them wait), unless
      // account or program files must be layered over them before the first answer.
      lazy: accountDirs.length + accounts.length + programs.length === 0,
    }),
    onInternalError: (err) =>
      process.stderr.write(`localnet: internal error: ${(err as Error)?.stack ?? String(err)}\n`),
  };
}

async function main(): Promise<void> {
  let config;
  try {
    config = loadLocalnetConfig();
  } catch (e) {
    process.stderr.write(`localnet: ${(e as Error).message}\n`);
    process.exit(2);
  }
  let localnet;
  try {
    localnet = await startLocalnetInProcess(config, hooks(config));
  } catch (e) {
    // A bad account or program file (or a port in use): one line naming it, not a stack.
    process.stderr.write(`localnet: ${(e as Error).message}\n`);
    process.exit(2);
  }
  let closing = false;
  const stop = async (code: number) => {
    if (closing) return;
    closing = true;
    await localnet.close();
    process.exit(code);
  };
  for (const signal of ["SIGTERM", "SIGINT"] as const) process.on(signal, () => void stop(0));
  if (config.exitWithStdin) {
    // The launcher holds our stdin: when it goes away (even killed), so do we.
    process.stdin.on("end", () => void stop(0));
    process.stdin.on("error", () => void stop(0));
    process.stdin.resume();
  }
  process.stdout.write(
    `${JSON.stringify({ event: "ready", rpcUrl: localnet.rpcUrl, wsUrl: localnet.wsUrl, pid: process.pid, blockEngineUrl: localnet.blockEngineUrl, sendUrls: localnet.sendUrls })}\n`,
  );
  process.stderr.write(
    `localnet: Solana JSON-RPC at ${localnet.rpcUrl} (PubSub ${localnet.wsUrl}), slot ${config.slotMs} ms, faucet ${localnet.chain.faucet}; blocks packed as agave 3.0 packs them: ${config.blockCostLimit} CU per block, ${config.accountCostLimit} per write-locked account\n`,
  );
  try {
    await localnet.loaded;
  } catch (e) {
    process.stderr.write(`localnet: loading the world failed: ${(e as Error)?.stack ?? String(e)}\n`);
    await stop(1);
    return;
  }
  // Every account is written: the launcher's `loaded` settles (the gateway's readiness waits for it).
  process.stdout.write(`${JSON.stringify({ event: "loaded" })}\n`);
}

await main();
