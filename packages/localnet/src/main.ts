/**
 * The localnet process as the launcher and `npm run localnet` run it: configured by the environment
 * (`LOCALNET_*`), one JSON ready line on stdout (`{"event":"ready","rpcUrl":...}`), a human line on
 * stderr (run.ts). The `solgate-localnet` command (cli.ts) runs the same process from flags.
 */
import { runLocalnet } from "./run.ts";

await runLocalnet(process.env, { style: "launcher", name: "localnet" });
