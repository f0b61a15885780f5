/**
 * Serves the demo page from a second local HTTP server (another port, so another origin): the page's
 * calls to the gateway are then cross-origin and go through CORS, as a real web app's would.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { buildDemoAssets } from "../../../src/demo/demo-assets.ts";

/** A running page server. */
export interface PageServer {
  /** The page's URL (add `?server=...&key=...`). */
  readonly url: string;
  readonly origin: string;
  close(): Promise<void>;
}

/** Bundles the page and serves it on 127.0.0.1, port 0. */
export async function startPageServer(): Promise<PageServer> {
  const assets = await buildDemoAssets();
  const server = http.createServer((req, res) => {
    const name = (req.url ?? "/").split("?")[0].replace(/^\/+/, "") || "index.html";
    const file = assets.get(name);
    if (file === undefined) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": file.contentType, "cache-control": "no-store" }).end(file.body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${origin}/index.html`,
    origin,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
