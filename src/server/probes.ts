/**
 * HTTP probes for load balancers and orchestrators, without a key: `GET /healthz` answers 200 while the
 * process serves at all (liveness); `GET /readyz` answers 200 only while it can do its work (readiness):
 * not draining, every check passing. The body names each check, so an operator sees which one failed.
 */
import type { NodeRequest, NodeResponse, PreHandler } from "./http-handler.ts";

/** A named readiness check: true when that part is ready. */
export type ReadinessCheck = () => boolean;

/** Options of {@link createProbeHandler}. */
export interface ProbeOptions {
  /** The checks of `/readyz`, by name (e.g. `redis`, `chain:mainnet`). */
  checks: Readonly<Record<string, ReadinessCheck>>;
}

/** Serves `/healthz` and `/readyz`; leaves every other path to the next handler. */
export function createProbeHandler(options: ProbeOptions): PreHandler {
  return (req: NodeRequest, res: NodeResponse) => {
    const path = (req.url ?? "").split("?")[0];
    if (path !== "/healthz" && path !== "/readyz") return false;
    if (req.method !== "GET" && req.method !== "HEAD") {
      reply(res, 405, { code: "method_not_allowed", message: "probes take GET" }, { allow: "GET, HEAD" });
      return true;
    }
    const checks =
      path === "/readyz"
        ? Object.fromEntries(Object.entries(options.checks).map(([name, check]) => [name, check()]))
        : {};
    const ok = Object.values(checks).every(Boolean);
    reply(
      res,
      ok ? 200 : 503,
      { status: ok ? "ok" : "unavailable", ...(path === "/readyz" ? { checks } : {}) },
      {},
      req.method === "HEAD",
    );
    return true;
  };
}

function reply(
  res: NodeResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
  headOnly = false,
): void {
  res.statusCode = status;
  res.setHeader("content-type", "application/json");
  res.setHeader("cache-control", "no-store");
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.end(headOnly ? "" : JSON.stringify(body));
}
