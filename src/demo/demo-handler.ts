/**
 * Serves the demo page at `/demo` (a pre-handler in front of Connect, enabled by configuration):
 * `GET /demo` redirects to `/demo/`, which answers `index.html`; `/demo/demo.js` and `/demo/demo.css`
 * are the bundle and the styles. The page calls the gateway it came from, so it needs no CORS.
 */
import type { NodeRequest, NodeResponse, PreHandler } from "../server/http-handler.ts";
import { buildDemoAssets } from "./demo-assets.ts";
import type { DemoAssets } from "./demo-assets.ts";

/** Options of `createDemoHandler`. */
export interface DemoHandlerOptions {
  /** Where the page lives; default `/demo`. */
  path?: string;
  /** Builds the files; default `buildDemoAssets` (tests may pass their own). */
  build?: () => Promise<DemoAssets>;
}

/** A pre-handler that answers `path` and everything under it, and passes everything else on. */
export function createDemoHandler(options: DemoHandlerOptions = {}): PreHandler {
  const base = options.path ?? "/demo";
  const build = options.build ?? buildDemoAssets;
  let assets: Promise<DemoAssets> | undefined;
  return async (req: NodeRequest, res: NodeResponse) => {
    const path = (req.url ?? "").split("?")[0];
    if (path !== base && !path.startsWith(`${base}/`)) return false;
    if (req.method !== "GET" && req.method !== "HEAD") {
      send(res, 405, { allow: "GET, HEAD", "content-type": "text/plain" }, "method not allowed\n");
      return true;
    }
    if (path === base) {
      send(res, 308, { location: `${base}/` });
      return true;
    }
    assets ??= build();
    let files: DemoAssets;
    try {
      files = await assets;
    } catch (e) {
      // Build again on the next request: the failure may be passing (or fixed by an install).
      assets = undefined;
      send(
        res,
        503,
        { "content-type": "text/plain; charset=utf-8" },
        `the demo page could not be built: ${(e as Error).message}\n`,
      );
      return true;
    }
    const name = path.slice(base.length + 1) || "index.html";
    const file = files.get(name);
    if (file === undefined) {
      send(res, 404, { "content-type": "text/plain" }, "not found\n");
      return true;
    }
    send(
      res,
      200,
      {
        "content-type": file.contentType,
        "content-length": String(file.body.length),
        "cache-control": "no-cache",
        "x-content-type-options": "nosniff",
        // The page may call only the gateway it came from (and any other the user names via `server`).
        "content-security-policy":
          "default-src 'self'; connect-src *; img-src 'self' data:; base-uri 'none'; frame-ancestors 'none'",
      },
      req.method === "HEAD" ? undefined : file.body,
    );
    return true;
  };
}

/** Answers with `status`, `headers` and `body`, over HTTP/1.1 or HTTP/2 alike. */
function send(res: NodeResponse, status: number, headers: Record<string, string>, body?: string | Buffer): void {
  res.statusCode = status;
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  if (body === undefined) res.end();
  else res.end(body);
}
