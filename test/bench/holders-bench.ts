/**
 * All holders of GATE (100,000 token accounts on the default world) through ListTokenHolders at
 * limit 1000, page after page over REST, against one direct getProgramAccounts with the same
 * filters (size 165, the mint at offset 0) to the same localnet. Both run from this process, the
 * load generator; the localnet and the gateway are processes of their own. Each round runs both,
 * alternating which goes first; the figure is the median of the rounds (target <= 1.5). Before each
 * gateway run the bench waits out the gateway's snapshot cache (20 s after its last read), so every
 * run pays for its own scan. Beside the wall times it prints the CPU time each side cost, summed over
 * the processes involved (gateway, localnet and this client, read from /proc): steadier than wall time on
 * a machine shared with other work.
 * Run: npx node test/bench/holders-bench.ts [--rounds 5] [--holders 100000]
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startLocalnet } from "@solgate/localnet";
import type { WorldManifest } from "@solgate/localnet";
import { FLEET_KEY, startGatewayProcess } from "../fleet/fleet-harness.ts";

const { values: args } = parseArgs({
  options: { rounds: { type: "string", default: "5" }, holders: { type: "string", default: "100000" } },
});
const TOKEN_PROGRAM = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";

const dir = mkdtempSync(join(tmpdir(), "solgate-holders-bench-"));
const localnet = await startLocalnet({
  startTimeoutMs: 180_000,
  world: {
    dir,
    tokenHolders: Number(args.holders),
    collectionSize: 20,
    nftOwners: 5,
    unverifiedSpoofs: 0,
    realAccounts: false,
  },
});
const manifest = JSON.parse(readFileSync(join(dir, "world-manifest.json"), "utf8")) as WorldManifest;
const gate = manifest.fungibleMints[0];
const gateway = await startGatewayProcess({
  rpcUrl: localnet.rpcUrl,
  wsUrl: localnet.wsUrl,
  chain: "local",
  ...(process.env.HOLDERS_PROFILE
    ? { extra: { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${process.env.HOLDERS_PROFILE}` } }
    : {}),
});

/** CPU milliseconds (user + system) a process has used so far. */
function cpuMsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // utime and stime (in 1/100 s) are fields 14 and 15 of the whole line: 12 and 13 after "pid (comm)".
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** CPU milliseconds the gateway, the localnet and this process spend while `run` runs. */
async function cpuOf<T>(run: () => Promise<T>): Promise<[{ gateway: number; localnet: number; client: number }, T]> {
  const gatewayPid = gateway.child.pid as number;
  const before = { gateway: cpuMsOf(gatewayPid), localnet: cpuMsOf(localnet.pid), client: process.cpuUsage() };
  const result = await run();
  const client = process.cpuUsage(before.client);
  return [
    {
      gateway: cpuMsOf(gatewayPid) - before.gateway,
      localnet: cpuMsOf(localnet.pid) - before.localnet,
      client: (client.user + client.system) / 1000,
    },
    result,
  ];
}

/** One getProgramAccounts, jsonParsed (owner and amount decoded, as the gateway gives them). */
async function direct(encoding: "jsonParsed" | "base64"): Promise<number> {
  const res = await fetch(localnet.rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "getProgramAccounts",
      params: [
        TOKEN_PROGRAM,
        {
          encoding,
          commitment: "confirmed",
          filters: [{ dataSize: 165 }, { memcmp: { offset: 0, bytes: gate.mint } }],
        },
      ],
    }),
  });
  const body = (await res.json()) as { result: unknown[] };
  return body.result.length;
}

/** Every page of ListTokenHolders at limit 1000 (includeZero, as getProgramAccounts has no amount filter). */
let firstPageMs = 0;
async function throughGateway(): Promise<number> {
  let cursor: string | null = null;
  let count = 0;
  const start = performance.now();
  do {
    const query: string = `limit=1000&includeZero=true${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`;
    const res = await fetch(`${gateway.url}/v1/local/tokens/${gate.mint}/holders?${query}`, {
      headers: { authorization: `Bearer ${FLEET_KEY}` },
    });
    if (res.status !== 200) throw new Error(`holders: ${res.status} ${await res.text()}`);
    const page = (await res.json()) as { items: unknown[]; nextCursor: string | null };
    if (count === 0) firstPageMs = performance.now() - start;
    count += page.items.length;
    cursor = page.nextCursor;
  } while (cursor !== null);
  return count;
}

async function timed<T>(run: () => Promise<T>): Promise<[number, T]> {
  const start = performance.now();
  const result = await run();
  return [performance.now() - start, result];
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

try {
  // Warm both paths once (JIT, the gateway's connections); not counted.
  await direct("jsonParsed");
  await throughGateway();
  const rows: { gateway: number; parsed: number; base64: number; gatewayCpu: number; parsedCpu: number }[] = [];
  for (let round = 0; round < Number(args.rounds); round++) {
    const order = round % 2 === 0 ? ["gateway", "direct"] : ["direct", "gateway"];
    const row = { gateway: 0, parsed: 0, base64: 0, gatewayCpu: 0, parsedCpu: 0 };
    let cpuText = "";
    for (const which of order) {
      if (which === "gateway") {
        await new Promise((resolve) => setTimeout(resolve, 21_000));
        const [cpu, [ms, count]] = await cpuOf(() => timed(throughGateway));
        if (count !== gate.holders + 1)
          throw new Error(`gateway listed ${count} holders, expected ${gate.holders + 1}`);
        row.gateway = ms;
        row.gatewayCpu = cpu.gateway + cpu.localnet + cpu.client;
        cpuText += ` gateway side ${row.gatewayCpu.toFixed(0)} ms (gateway ${cpu.gateway}, localnet ${cpu.localnet}, client ${cpu.client.toFixed(0)});`;
      } else {
        const [cpu, [ms, count]] = await cpuOf(() => timed(() => direct("jsonParsed")));
        if (count !== gate.holders + 1)
          throw new Error(`getProgramAccounts returned ${count}, expected ${gate.holders + 1}`);
        row.parsed = ms;
        row.parsedCpu = cpu.gateway + cpu.localnet + cpu.client;
        cpuText += ` direct side ${row.parsedCpu.toFixed(0)} ms (localnet ${cpu.localnet}, client ${cpu.client.toFixed(0)});`;
        row.base64 = (await timed(() => direct("base64")))[0];
      }
    }
    rows.push(row);
    console.log(
      `round ${round + 1}: gateway ${row.gateway.toFixed(0)} ms (first page, with the scan: ${firstPageMs.toFixed(0)} ms), getProgramAccounts jsonParsed ${row.parsed.toFixed(0)} ms, base64 ${row.base64.toFixed(0)} ms; CPU:${cpuText}`,
    );
  }
  const g = median(rows.map((r) => r.gateway));
  const p = median(rows.map((r) => r.parsed));
  const b = median(rows.map((r) => r.base64));
  const gc = median(rows.map((r) => r.gatewayCpu));
  const pc = median(rows.map((r) => r.parsedCpu));
  console.log(
    `all ${gate.holders + 1} GATE holders: ListTokenHolders (limit 1000, ${Math.ceil((gate.holders + 1) / 1000)} pages over REST) ${g.toFixed(0)} ms, ` +
      `one getProgramAccounts jsonParsed ${p.toFixed(0)} ms (ratio ${(g / p).toFixed(2)}, target <= 1.5), base64 ${b.toFixed(0)} ms (ratio ${(g / b).toFixed(2)}); ` +
      `CPU of all processes: ${gc.toFixed(0)} vs ${pc.toFixed(0)} ms (ratio ${(gc / pc).toFixed(2)})`,
  );
} finally {
  await gateway.stop();
  await localnet.stop();
  rmSync(dir, { recursive: true, force: true });
}
