/**
 * How large the getProgramAccounts answers of the token-holders listing are on the localnet's world of
 * 100,000 holders: the figure SOLGATE_UPSTREAM_MAX_SCAN_RESPONSE_BYTES's default is sized from
 * (docs/configuration.md). Sends the exact payload ListTokenHolders sends (the mint at offset 0, size 165,
 * the 40-byte slice at offset 32) and the key scan's (empty slice), and prints the body sizes, uncompressed.
 * Run: npx node test/bench/scan-size-bench.ts [--holders 100000]
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startLocalnet } from "@solgate/localnet";
import type { WorldManifest } from "@solgate/localnet";

const { values: args } = parseArgs({ options: { holders: { type: "string", default: "100000" } } });
const TOKEN_PROGRAM = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";
const dir = mkdtempSync(join(tmpdir(), "solgate-scan-size-"));
const localnet = await startLocalnet({
  startTimeoutMs: 300_000,
  traffic: false,
  world: { dir, tokenHolders: Number(args.holders), collectionSize: 7, unverifiedSpoofs: 0, realAccounts: false },
});
try {
  await localnet.loaded;
  const manifest = JSON.parse(readFileSync(join(dir, "world-manifest.json"), "utf8")) as WorldManifest;
  const gate = manifest.fungibleMints[0];
  const filters = [{ memcmp: { offset: 0, bytes: gate.mint, encoding: "base58" } }, { dataSize: 165 }];
  for (const [name, dataSlice] of [
    ["token holders (40-byte slice at 32, as ListTokenHolders asks)", { offset: 32, length: 40 }],
    ["key scan (empty slice)", { offset: 0, length: 0 }],
  ] as const) {
    const res = await fetch(localnet.rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "getProgramAccounts",
        params: [TOKEN_PROGRAM, { encoding: "base64", dataSlice, commitment: "confirmed", filters }],
      }),
    });
    const body = Buffer.from(await res.arrayBuffer());
    const accounts = (JSON.parse(body.toString()) as { result: unknown[] }).result.length;
    console.log(
      `${name}: ${accounts.toLocaleString("en")} accounts, ${body.length.toLocaleString("en")} bytes (${(body.length / 2 ** 20).toFixed(1)} MiB, ${(body.length / accounts).toFixed(0)} bytes an account)`,
    );
  }
} finally {
  await localnet.stop();
  rmSync(dir, { recursive: true, force: true });
}
