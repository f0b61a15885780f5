/**
 * Runs the localnet process: reads its configuration, opens the ledger directory if there is one,
 * starts the chain and the JSON-RPC server, says it is ready, and exits cleanly on SIGTERM/SIGINT (or
 * when stdin closes, if launched). Two ways to say it is ready:
 * - `launcher` (main.ts, `npm run localnet`): one JSON line on stdout (`{"event":"ready","rpcUrl":...}`,
 *   what launcher.ts waits for) and a human line on stderr;
 * - `command` (cli.ts, `solgate-localnet`): solana-test-validator's start-up lines on stdout.
 * `--quiet` / LOCALNET_QUIET=1 drops the human lines (the JSON line stays).
 */
import { loadLocalnetConfig, type LocalnetConfig } from "./config.ts";
import { openLedgerDir, LEDGER_FILES, type LedgerDir } from "./ledger/ledger-dir.ts";
import { startLocalnetInProcess, type LocalnetHooks } from "./localnet.ts";
import { API_VERSION, FEATURE_SET } from "./rpc/params.ts";
import { createWorldHooks, type WorldHooks } from "./world/world-hooks.ts";
import { agaveStartLines } from "./ledger/agave-log.ts";
import { shredVersionOf } from "./cluster/shred-version.ts";

/** How the process announces itself (see the module comment). */
export interface RunOptions {
  style: "launcher" | "command";
  /** Prefix of its error lines. */
  name: string;
}

/** The hooks this process runs with; later issues (world seeding, DAS, traffic) plug in here. */
function hooks(config: LocalnetConfig, name: string): LocalnetHooks & { world: WorldHooks } {
  const { accountDirs, accounts, programs } = config.loading;
  const world = createWorldHooks({
    world: config.world,
    traffic: config.traffic,
    // The world's accounts are written after the server answers (calls that could see them wait), unless
    // account or program files must be layered over them before the first answer.
    lazy: accountDirs.length + accounts.length + programs.length === 0,
  });
  return {
    ...world,
    world,
    onInternalError: (err) =>
      process.stderr.write(`${name}: internal error: ${(err as Error)?.stack ?? String(err)}\n`),
  };
}

/** Starts the process from `env`; never returns on a bad start (one line on stderr, exit code 2). */
export async function runLocalnet(env: NodeJS.ProcessEnv, options: RunOptions): Promise<void> {
  const { name } = options;
  const die: (e: unknown) => never = (e) => {
    // A bad variable, a bad account or program file, a port in use, a ledger directory that cannot be
    // written: one line naming it, not a stack.
    process.stderr.write(`${name}: ${(e as Error).message}\n`);
    process.exit(2);
  };
  let ledger: LedgerDir | undefined;
  const configure = (): LocalnetConfig => {
    const config = loadLocalnetConfig(env);
    if (config.ledger.dir === undefined) return config;
    ledger = openLedgerDir(config.ledger.dir, config.ledger.reset);
    return { ...config, keys: ledger.keys };
  };
  let config: LocalnetConfig;
  try {
    config = configure();
  } catch (e) {
    die(e);
  }
  const localnetHooks = hooks(config, name);
  const localnet = await startLocalnetInProcess(config, localnetHooks).catch(die);
  // The marketplace's collections (Magic Eden symbols by collection mint), for a gateway's configuration.
  const market = localnetHooks.world.marketplace;
  const marketplace =
    market === undefined
      ? undefined
      : { url: localnet.rpcUrl, collections: Object.fromEntries(market.collections.map((c) => [c.mint, c.symbol])) };
  let closing = false;
  const stop = async (code: number) => {
    if (closing) return;
    closing = true;
    await localnet.close();
    ledger?.close();
    process.exit(code);
  };
  for (const signal of ["SIGTERM", "SIGINT"] as const) process.on(signal, () => void stop(0));
  if (config.exitWithStdin) {
    // The launcher holds our stdin: when it goes away (even killed), so do we.
    process.stdin.on("end", () => void stop(0));
    process.stdin.on("error", () => void stop(0));
    process.stdin.resume();
  }
  const { chain } = localnet;
  const genesisHash = chain.block(chain.genesisSlot)?.blockhash ?? "";
  // What tools read from solana-test-validator's dashboard and log, in its words.
  const facts = [
    `Identity: ${chain.cluster.identity.address}`,
    `Vote Account: ${chain.cluster.voteAccount.address}`,
    `Faucet: ${chain.faucet}`,
    `Genesis Hash: ${genesisHash}`,
    `Version: ${API_VERSION}`,
    `JSON RPC URL: ${localnet.rpcUrl}`,
    `WebSocket PubSub URL: ${localnet.wsUrl}`,
    ...(localnet.geyserUrl === undefined ? [] : [`Yellowstone gRPC URL: ${localnet.geyserUrl}`]),
  ];
  if (ledger) {
    // agave's own lines first (what tools grep), then the dashboard's, which carry the PubSub URL.
    const start = agaveStartLines({
      version: API_VERSION,
      featureSet: FEATURE_SET,
      identity: chain.cluster.identity.address,
      genesisHash,
      shredVersion: shredVersionOf(genesisHash),
      rpc: new URL(localnet.rpcUrl).host,
      pubsub: new URL(localnet.wsUrl).host,
      sockets: localnet.nodeSockets,
    });
    for (const line of start) ledger.log(line.text, line.target);
    for (const line of facts) ledger.log(line);
  }
  const quiet = config.quiet;
  if (options.style === "launcher") {
    process.stdout.write(
      `${JSON.stringify({ event: "ready", rpcUrl: localnet.rpcUrl, wsUrl: localnet.wsUrl, geyserUrl: localnet.geyserUrl, pid: process.pid, blockEngineUrl: localnet.blockEngineUrl, sendUrls: localnet.sendUrls, marketplace })}\n`,
    );
    if (!quiet) {
      process.stderr.write(
        `${name}: Solana JSON-RPC at ${localnet.rpcUrl} (PubSub ${localnet.wsUrl}), slot ${config.slotMs} ms, faucet ${chain.faucet}; blocks packed as agave 4.4 packs them: ${config.blockCostLimit} CU per block, ${config.accountCostLimit} per write-locked account\n`,
      );
      if (localnet.geyserUrl !== undefined)
        process.stderr.write(`${name}: Yellowstone gRPC (geyser.Geyser) at ${localnet.geyserUrl}\n`);
    }
  } else if (!quiet) {
    const where = ledger ? [`Ledger location: ${ledger.dir}`, `Log: ${ledger.dir}/${LEDGER_FILES.log}`] : [];
    process.stdout.write(`${[...where, ...facts].join("\n")}\n`);
  }
  try {
    await localnet.loaded;
  } catch (e) {
    process.stderr.write(`${name}: loading the world failed: ${(e as Error)?.stack ?? String(e)}\n`);
    await stop(1);
    return;
  }
  // Every account is written: the launcher's `loaded` settles (the gateway's readiness waits for it).
  if (options.style === "launcher") process.stdout.write(`${JSON.stringify({ event: "loaded" })}\n`);
}
