/**
 * Starts one gateway (with its embedded localnet) for the whole interop run, writes the chain
 * fixture, and hands both to the test files through vitest's `provide`/`inject`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { createChainFixture } from "./harness/chain-fixture.ts";
import type { ChainFixture } from "./harness/chain-fixture.ts";
import { clientEnv } from "./harness/client-env.ts";
import type { CollectionFixture } from "./harness/client-env.ts";
import { startInteropGateway } from "./harness/gateway.ts";
import { marketEnv, startMarketFixture } from "./harness/market-fixture.ts";
import { INTEROP_WORLD_ENV, readCollectionFixture } from "./harness/world-fixture.ts";

/** What every interop test file gets. */
export interface InteropContext {
  url: string;
  addr: string;
  apiKey: string;
  localnetUrl: string;
  chain: ChainFixture;
  collection: CollectionFixture;
  /** The clients' environment, less INTEROP_DRAFT_TX. */
  env: Record<string, string>;
}

declare module "vitest" {
  export interface ProvidedContext {
    interop: InteropContext;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const started = performance.now();
  // The localnet child inherits this process's environment: a small world, written where we can read it.
  const worldDir = mkdtempSync(join(tmpdir(), "solgate-interop-world-"));
  for (const [name, value] of Object.entries({ ...INTEROP_WORLD_ENV, LOCALNET_WORLD_DIR: worldDir }))
    process.env[name] ??= value;
  // The seeded collection's floor moves (the market fixture), so its change feed has events to stream.
  const market = await startMarketFixture();
  // The demo page at /demo/ (src/demo) is on, so the browser test can load it from the gateway itself.
  const gw = await startInteropGateway({ SOLGATE_DEMO: "1", ...marketEnv(market) });
  try {
    const chain = await createChainFixture(gw.localnetUrl);
    const collection = await readCollectionFixture(process.env.LOCALNET_WORLD_DIR ?? worldDir, gw.localnetUrl);
    if (collection.address !== marketEnv(market).SOLGATE_FLOOR_SOURCES.split("=")[0])
      throw new Error(
        `the market fixture lists ${marketEnv(market).SOLGATE_FLOOR_SOURCES}, the world seeded ${collection.address}`,
      );
    project.provide("interop", {
      url: gw.url,
      addr: gw.addr,
      apiKey: gw.apiKey,
      localnetUrl: gw.localnetUrl,
      chain,
      collection,
      env: clientEnv(gw, chain, collection),
    });
    console.log(
      `interop: gateway ${gw.url} with localnet ${gw.localnetUrl}, ready in ${Math.round(performance.now() - started)} ms`,
    );
  } catch (e) {
    await gw.close();
    await market.close();
    rmSync(worldDir, { recursive: true, force: true });
    throw e;
  }
  return async () => {
    await gw.close();
    await market.close();
    rmSync(worldDir, { recursive: true, force: true });
    const problems = gw.logs.filter((l) => /"level":"(error|fatal)"/.test(l));
    if (problems.length > 0)
      console.log(`interop: the gateway logged ${problems.length} errors:\n${problems.slice(0, 10).join("\n")}`);
  };
}
