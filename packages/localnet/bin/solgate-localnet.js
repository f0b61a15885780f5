#!/usr/bin/env node
// The `solgate-localnet` command. Plain JavaScript, so that any Node can start it:
// - Node 24 or newer runs the TypeScript sources directly. Node strips their types itself, except
//   under node_modules (an installed package), where it refuses; there a module hook strips them
//   with Node's own stripTypeScriptTypes.
// - An older Node hands over to the Node 24 this package depends on (the `node` package), with the
//   same arguments, and passes signals and the exit code through.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import module from "node:module";
import { fileURLToPath } from "node:url";

const major = Number(process.versions.node.split(".")[0]);
if (major >= 24) {
  // stripTypeScriptTypes warns that it is experimental, once per process; the command's stderr stays its own.
  const emitWarning = process.emitWarning;
  process.emitWarning = (warning, ...rest) => {
    if (!String(warning?.message ?? warning).includes("stripTypeScriptTypes"))
      emitWarning.call(process, warning, ...rest);
  };
  module.registerHooks({
    load(url, context, nextLoad) {
      if (url.startsWith("file:") && url.endsWith(".ts") && url.includes("/node_modules/")) {
        const source = readFileSync(fileURLToPath(url), "utf8");
        return { format: "module", source: module.stripTypeScriptTypes(source), shortCircuit: true };
      }
      return nextLoad(url, context);
    },
  });
  // V8's code cache for the sources (in the OS temp dir, keyed by content): most of a start is compiling
  // them, and with the cache a start takes a fraction of that (command-start-bench).
  module.enableCompileCache();
  await import("../src/cli/cli.ts");
} else {
  let node;
  try {
    node = fileURLToPath(new URL("bin/node", import.meta.resolve("node/package.json")));
  } catch {
    process.stderr.write(
      `solgate-localnet: needs Node 24 or newer (this is ${process.version}), and the "node" package is not installed\n`,
    );
    process.exit(1);
  }
  const child = spawn(node, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: "inherit" });
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => child.kill(signal));
  child.on("exit", (code, signal) => {
    if (signal) process.kill(process.pid, signal);
    else process.exit(code ?? 1);
  });
}
