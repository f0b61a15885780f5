/**
 * Every RPC Solgate serves, through the real gateway on port 0, in front of a hostile node (see
 * hostile-upstream.ts) in each of its modes: no INTERNAL, no HTTP 500, no hang; every answer is the
 * honest value or UNAVAILABLE / 503 with a reason. A fresh gateway per mode (started while the node is
 * still honest, as a provider turns bad mid-flight), so no mode is answered from another's caches.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JsonValue } from "@bufbuild/protobuf";
import { startLocalnet } from "@solgate/localnet";
import type { LocalnetHandle } from "@solgate/localnet";
import { loadConfig } from "../../src/config.ts";
import { startGateway } from "../../src/main.ts";
import { createLogger } from "../../src/server/logger.ts";
import { createLogSink } from "../server/helpers.ts";
import { HOSTILE_MODES, startHostileUpstream } from "./hostile-upstream.ts";
import type { HostileMode, HostileUpstream } from "./hostile-upstream.ts";
import { callOnce, judge, requestsOfEveryRpc } from "./hostile-calls.ts";
import type { CallOutcome, HostileWorld } from "./hostile-calls.ts";

const KEY = "hostile-upstream-test-key";
const CHAIN = "hostile";
let localnet: LocalnetHandle;
let hostile: HostileUpstream;
let requests: Map<string, JsonValue>;
const honest = new Map<string, CallOutcome>();

beforeAll(async () => {
  const dir = mkdtempSync(path.join(tmpdir(), "hostile-world-"));
  localnet = await startLocalnet({
    slotMs: 100,
    world: { collectionSize: 7, tokenHolders: 30, dir },
    traffic: false,
    startTimeoutMs: 240_000,
  });
  await localnet.loaded;
  const manifest = JSON.parse(readFileSync(path.join(dir, "world-manifest.json"), "utf8")) as HostileWorld;
  hostile = await startHostileUpstream(localnet.rpcUrl, localnet.wsUrl);
  requests = await requestsOfEveryRpc({ ...manifest, chain: CHAIN }, localnet.rpcUrl);
}, 300_000);
afterAll(async () => {
  await hostile?.close();
  await localnet?.stop();
});

/** A fresh gateway on the hostile node, every RPC called once in `mode`, then the gateway stopped. */
async function everyRpcIn(mode: HostileMode): Promise<{ outcomes: CallOutcome[]; logs: Record<string, unknown>[] }> {
  hostile.mode = "honest";
  const sink = createLogSink();
  const config = loadConfig({
    PORT: "0",
    HOST: "127.0.0.1",
    METRICS_PORT: "0",
    SOLGATE_RPC_URL: hostile.url,
    SOLGATE_WS_URL: hostile.wsUrl,
    SOLGATE_CHAIN: CHAIN,
    SOLGATE_API_KEYS: KEY,
    // The trickle is cut by the budget: 2 s here, not the default 10 s. The 2 GB answers get the default, so
    // that even a loaded machine reads to the size limit (16 MiB) before the budget runs out.
    SOLGATE_UPSTREAM_BUDGET_MS: mode === "huge" ? "10000" : "2000",
    // Every call reaches the node (an open breaker would answer before the checks under test run).
    SOLGATE_UPSTREAM_BREAKER_FAILURES: "1000",
    SOLGATE_UPSTREAM_BREAKER_FAILURE_PERCENT: "100",
  });
  const gateway = await startGateway(config, createLogger({ level: "info", destination: sink.stream }));
  try {
    hostile.mode = mode;
    hostile.reset();
    const origin = `http://127.0.0.1:${gateway.port}`;
    const outcomes = await Promise.all(
      [...requests].map(([rpc, request]) => callOnce(origin, KEY, rpc, request, 30_000)),
    );
    return { outcomes, logs: sink.lines };
  } finally {
    hostile.mode = "honest";
    await gateway.close();
  }
}

describe("behind a hostile upstream, every RPC", () => {
  it("answers honestly behind an honest node (the baseline)", async () => {
    const { outcomes } = await everyRpcIn("honest");
    for (const o of outcomes) honest.set(o.rpc, o);
    // The node's own refusals (a draft that fails simulation, a signature nobody sent) are answers too.
    const failed = outcomes.filter((o) => o.code === "unavailable" || o.code === "internal" || o.code === "hang");
    expect(failed).toEqual([]);
  }, 120_000);

  for (const mode of HOSTILE_MODES.filter((m) => m !== "honest")) {
    it(`answers the honest value or UNAVAILABLE / 503 with a reason: ${mode}`, async () => {
      const { outcomes, logs } = await everyRpcIn(mode);
      const wrong = outcomes.map((o) => judge(o, honest.get(o.rpc))).filter((w) => w !== undefined);
      expect(wrong).toEqual([]);
      expect(outcomes.filter((o) => o.httpStatus === 500 || o.code === "internal")).toEqual([]);
      // The node was asked, and something was refused or failed (not all served from caches).
      expect(hostile.seen.length).toBeGreaterThan(0);
      expect(outcomes.some((o) => o.code === "unavailable")).toBe(true);
      if (mode === "wrong-types" || mode === "missing-fields" || mode === "past-u64") {
        expect(outcomes.some((o) => o.reason === "UPSTREAM_INVALID_RESPONSE")).toBe(true);
        const refused = logs.filter((l) => l.msg === "upstream answer refused");
        expect(refused.length).toBeGreaterThan(0);
        // Where the answer went wrong, never the answer.
        for (const l of refused) {
          expect(l).toMatchObject({ method: expect.any(String), endpoint: new URL(hostile.url).origin });
          expect(String(l.path)).toMatch(/^result/);
          expect(JSON.stringify(l)).not.toContain("a string instead");
        }
      }
      if (mode === "huge") {
        expect(outcomes.some((o) => o.failure === "response_too_large")).toBe(true);
      }
      if (mode === "lying") {
        expect(outcomes.some((o) => o.failure === "node_lagging")).toBe(true);
      }
    }, 180_000);
  }
});
