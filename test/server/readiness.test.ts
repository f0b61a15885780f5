/**
 * Readiness follows the upstream: a gateway in front of a standalone localnet (a child process) turns not
 * ready, on /readyz and in grpc.health's per-service statuses, when the localnet is killed and every
 * URL's breaker opens, and ready again once a localnet answers on that port again. The server's own entry
 * ("") stays SERVING: it is the process's liveness, which only draining ends.
 */
import { afterAll, describe, expect, it } from "vitest";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { startLocalnet } from "@solgate/localnet";
import type { LocalnetHandle } from "@solgate/localnet";
import { Health, HealthCheckResponse_ServingStatus as Status } from "../../gen/grpc/health/v1/health_pb.js";
import { loadConfig } from "../../src/config.ts";
import { startGateway } from "../../src/main.ts";
import type { Gateway } from "../../src/main.ts";
import { createLogger } from "../../src/server/logger.ts";
import { createLogSink } from "./helpers.ts";

const SERVICE = "solgate.v1.FeeService";
let localnet: LocalnetHandle | undefined;
let gateway: Gateway | undefined;

afterAll(async () => {
  await gateway?.close();
  await localnet?.stop();
});

/** Polls until `probe` gives `want`; returns how it stood at the end. */
async function until<T>(probe: () => Promise<T>, want: T, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last = await probe();
  while (last !== want && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    last = await probe();
  }
  return last;
}

describe("readiness and the upstream", () => {
  it("goes not ready (readyz 503, service NOT_SERVING) while the upstream is down, and back when it returns", async () => {
    localnet = await startLocalnet({ slotMs: 50 });
    const port = Number(new URL(localnet.rpcUrl).port);
    const config = loadConfig({
      PORT: "0",
      HOST: "127.0.0.1",
      METRICS_PORT: "0",
      SOLGATE_RPC_URL: localnet.rpcUrl,
      SOLGATE_WS_URL: "off",
      SOLGATE_CHAIN: "remote",
      SOLGATE_API_KEYS: "readiness-key",
      SOLGATE_UPSTREAM_TIMEOUT_MS: "300",
      SOLGATE_UPSTREAM_BUDGET_MS: "1000",
      SOLGATE_UPSTREAM_MAX_RETRIES: "1",
      SOLGATE_UPSTREAM_BREAKER_FAILURES: "3",
      SOLGATE_UPSTREAM_BREAKER_COOLDOWN_MS: "500",
    });
    gateway = await startGateway(config, createLogger({ level: "info", destination: createLogSink().stream }));
    const base = `http://127.0.0.1:${gateway.port}`;
    const health = createClient(Health, createGrpcTransport({ baseUrl: base }));
    const readyz = () => fetch(`${base}/readyz`).then((r) => r.status);
    const serviceStatus = async () => (await health.check({ service: SERVICE })).status;

    expect(await until(readyz, 200, 15_000)).toBe(200);
    expect(await until(serviceStatus, Status.SERVING, 5_000)).toBe(Status.SERVING);

    process.kill(localnet.pid, "SIGKILL");
    await localnet.exited;
    localnet = undefined;
    expect(await until(readyz, 503, 15_000)).toBe(503);
    const body = (await (await fetch(`${base}/readyz`)).json()) as { checks: Record<string, boolean> };
    expect(body.checks["chain:remote"]).toBe(false);
    expect(await until(serviceStatus, Status.NOT_SERVING, 5_000)).toBe(Status.NOT_SERVING);
    expect((await health.check({ service: "" })).status).toBe(Status.SERVING);
    const metrics = await (await fetch(`http://127.0.0.1:${gateway.metricsPort}/metrics`)).text();
    expect(metrics).toMatch(
      /solgate_upstream_breaker_state\{chain="remote",endpoint="http:\/\/127\.0\.0\.1:\d+"\} [12]/,
    );

    localnet = await startLocalnet({ slotMs: 50, port });
    expect(await until(readyz, 200, 20_000)).toBe(200);
    expect(await until(serviceStatus, Status.SERVING, 5_000)).toBe(Status.SERVING);
  }, 90_000);

  it("on the embedded localnet, stays not ready until the localnet has loaded its whole world", async () => {
    await gateway?.close();
    gateway = undefined;
    await localnet?.stop();
    // A real localnet (with traffic, so the fee window gets levels and the port opens), whose `loaded` the
    // test holds: what `npm start` sees while the world's accounts are still being written.
    const started = await startLocalnet({ slotMs: 50, world: false, traffic: true });
    localnet = started;
    let release: () => void = () => {};
    const loaded = new Promise<void>((resolve) => {
      release = resolve;
    });
    const config = loadConfig({
      PORT: "0",
      HOST: "127.0.0.1",
      METRICS_PORT: "0",
      SOLGATE_API_KEYS: "readiness-key",
      LOCALNET_WORLD: "0",
    });
    expect(config.localnet.enabled).toBe(true);
    gateway = await startGateway(config, createLogger({ level: "info", destination: createLogSink().stream }), {
      localnet: Promise.resolve({ ...started, loaded }),
    });
    const base = `http://127.0.0.1:${gateway.port}`;
    const checks = async () =>
      ((await (await fetch(`${base}/readyz`)).json()) as { checks: Record<string, boolean> }).checks;
    // The chain itself is ready (fees have levels: the port opened on them); the world is not.
    expect(await until(async () => (await checks())["chain:localnet"], true, 10_000)).toBe(true);
    expect(await checks()).toMatchObject({ "chain:localnet": true, "localnet:world": false });
    expect((await fetch(`${base}/readyz`)).status).toBe(503);
    release();
    expect(await until(() => fetch(`${base}/readyz`).then((r) => r.status), 200, 5_000)).toBe(200);
    expect((await checks())["localnet:world"]).toBe(true);
  }, 60_000);
});
