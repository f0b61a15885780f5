import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDemoHandler } from "../../src/demo/demo-handler.ts";
import { startTestServer } from "../server/helpers.ts";
import type { TestServer } from "../server/helpers.ts";

describe("demo page handler", () => {
  let server: TestServer;
  let builds = 0;
  beforeAll(async () => {
    const { buildDemoAssets } = await import("../../src/demo/demo-assets.ts");
    server = await startTestServer({
      preHandlers: [createDemoHandler({ build: () => (builds++, buildDemoAssets()) })],
    });
  });
  afterAll(() => server?.listening.close({ timeoutMs: 100 }));

  it("redirects /demo to /demo/ and serves the page, its styles and its bundle", async () => {
    const redirect = await fetch(`${server.url}/demo?x=1`, { redirect: "manual" });
    expect(redirect.status).toBe(308);
    expect(redirect.headers.get("location")).toBe("/demo/");

    const page = await fetch(`${server.url}/demo/`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    expect(page.headers.get("content-security-policy")).toContain("default-src 'self'");
    const html = await page.text();
    expect(html).toContain('<script type="module" src="demo.js">');

    const js = await fetch(`${server.url}/demo/demo.js`);
    expect(js.headers.get("content-type")).toMatch(/^text\/javascript/);
    const code = await js.text();
    // The bundle carries connect-web's gRPC-Web transport and the page's own code (booleans: the
    // bundle is too big to print on a failure).
    expect(code.includes("application/grpc-web")).toBe(true);
    expect(code.includes("solgateReport")).toBe(true);

    expect((await fetch(`${server.url}/demo/demo.css`)).status).toBe(200);
    expect(builds).toBe(1);
  });

  it("answers 404 under /demo, 405 for other methods, and passes everything else on", async () => {
    expect((await fetch(`${server.url}/demo/nope.js`)).status).toBe(404);
    expect((await fetch(`${server.url}/demo/`, { method: "POST" })).status).toBe(405);
    expect((await fetch(`${server.url}/demonstration`)).status).toBe(404);
    const head = await fetch(`${server.url}/demo/demo.js`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
    // Connect still answers behind the pre-handler.
    const health = await fetch(`${server.url}/grpc.health.v1.Health/Check`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(await health.json()).toEqual({ status: "SERVING" });
  });

  it("answers 503 when the page cannot be built, and tries again on the next request", async () => {
    let attempts = 0;
    const broken = await startTestServer({
      preHandlers: [
        createDemoHandler({
          build: async () => {
            attempts++;
            throw new Error("esbuild is not installed");
          },
        }),
      ],
    });
    try {
      const res = await fetch(`${broken.url}/demo/`);
      expect(res.status).toBe(503);
      expect(await res.text()).toContain("esbuild is not installed");
      await fetch(`${broken.url}/demo/`);
      expect(attempts).toBe(2);
    } finally {
      await broken.listening.close({ timeoutMs: 100 });
    }
  });
});
