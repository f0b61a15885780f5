/**
 * The localnet process as the launcher and `npm run localnet` run it: configured by the environment
 * (`LOCALNET_*`), one JSON ready line on stdout (`{"event":"ready","rpcUrl":...}`), a human line on
 * stderr (run.ts). The `solgate-localnet` command (cli.ts) runs the same process from flags.
 */
import module from "node:module";

// V8's code cache for the sources (in the OS temp dir, keyed by content): most of a start is compiling
// them; with the cache it is a fraction of that (test/bench/command-start-bench.ts). Enabled before the
// sources are imported, hence the dynamic import.
module.enableCompileCache();
const { runLocalnet } = await import("./run.ts");
await runLocalnet(process.env, { style: "launcher", name: "localnet" });
