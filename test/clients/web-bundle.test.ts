/**
 * `@solgate/client/web` bundles for a browser: esbuild (platform `browser`) resolves every import without
 * Node's built-ins, which the Node entry (connect-node: node:http2) cannot do.
 */
import { join } from "node:path";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";

const entry = (name: string) => join(import.meta.dirname, "../../packages/client/src", name);

async function bundleForBrowser(file: string) {
  return build({
    entryPoints: [file],
    bundle: true,
    platform: "browser",
    format: "esm",
    write: false,
    logLevel: "silent",
  });
}

describe("@solgate/client/web in a browser bundle", () => {
  it("bundles with no Node built-in", async () => {
    const result = await bundleForBrowser(entry("web.ts"));
    const code = result.outputFiles[0].text;
    expect(code).toContain("createGrpcWebTransport");
    expect(code).not.toMatch(/node:|http2/);
  });

  it("unlike the Node entry, which needs node:http2", async () => {
    await expect(bundleForBrowser(entry("index.ts"))).rejects.toThrow(/node:http2|http2/);
  });
});
