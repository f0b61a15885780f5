/**
 * A local HTTP server for the tests of code that fetches from the web (metadata JSON, marketplace
 * stats): routes answer with JSON, redirects, stalls or oversized bodies, and every hit is counted.
 */
import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export type Route = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

export interface HttpFixture {
  /** `http://127.0.0.1:<port>` */
  url: string;
  routes: Map<string, Route>;
  /** Hits per path (query included). */
  hits: Map<string, number>;
  /** Request headers, per path, of the last hit. */
  headers: Map<string, IncomingMessage["headers"]>;
  hitsOf(path: string): number;
  close(): Promise<void>;
}

/** Answers `body` as JSON with `status`, after `delayMs`. */
export function json(body: unknown, status = 200, delayMs = 0): Route {
  return async (_req, res) => {
    if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
    if (res.destroyed) return;
    res.writeHead(status, { "content-type": "application/json" });
    res.end(typeof body === "string" ? body : JSON.stringify(body));
  };
}

export function redirect(location: string, status = 302): Route {
  return (_req, res) => {
    res.writeHead(status, { location });
    res.end();
  };
}

/** Never answers (until the client gives up). */
export const stall: Route = () => undefined;

export async function startHttpFixture(): Promise<HttpFixture> {
  const routes = new Map<string, Route>();
  const hits = new Map<string, number>();
  const headers = new Map<string, IncomingMessage["headers"]>();
  const server = createServer((req, res) => {
    const path = req.url ?? "/";
    hits.set(path, (hits.get(path) ?? 0) + 1);
    headers.set(path, req.headers);
    const route = routes.get(path) ?? routes.get(path.split("?")[0]);
    if (route === undefined) {
      res.writeHead(404).end();
      return;
    }
    void Promise.resolve(route(req, res)).catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    routes,
    hits,
    headers,
    hitsOf: (path) => hits.get(path) ?? 0,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
