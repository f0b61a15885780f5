/**
 * A JSON-RPC proxy in front of the localnet that rewrites DAS answers the way a wrong or hostile
 * provider might: `rewrite` sees each getAssetsByGroup result (items as the localnet rendered them)
 * and may change it in place. Everything else passes through untouched.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface DasFaultProxy {
  url: string;
  /** Changes a getAssetsByGroup result in place; the call count starts at 1. */
  rewrite: ((result: { items: Record<string, any>[] }, call: number) => void) | undefined;
  /** getAssetsByGroup calls seen (with their params). */
  groupCalls: unknown[];
  close(): Promise<void>;
}

export async function startDasFaultProxy(target: string): Promise<DasFaultProxy> {
  const proxy: DasFaultProxy = { url: "", rewrite: undefined, groupCalls: [], close: async () => undefined };
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString("utf8");
    const upstream = await fetch(target, { method: "POST", headers: { "content-type": "application/json" }, body });
    let text = await upstream.text();
    const request = JSON.parse(body) as { method?: string; params?: unknown };
    if (request.method === "getAssetsByGroup") {
      const response = JSON.parse(text) as { result?: { items: Record<string, any>[] } };
      if (response.result !== undefined) {
        proxy.groupCalls.push(request.params);
        proxy.rewrite?.(response.result, proxy.groupCalls.length);
        text = JSON.stringify(response);
      }
    }
    res.writeHead(upstream.status, { "content-type": "application/json" });
    res.end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return proxy;
}
