/**
 * Off-chain metadata JSON over real HTTP from a local server: the success path, and every way it
 * must fail softly (slow, huge, redirected to another scheme, not JSON, not reachable, internal).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { networkInterfaces } from "node:os";
import { httpGet, HttpGetError, isNonPublicAddress } from "../../src/collections/http-get.ts";
import type { HttpGetOptions } from "../../src/collections/http-get.ts";
import { createOffchainJson, safeImageUrl } from "../../src/collections/offchain-json.ts";
import { json, redirect, stall, startHttpFixture } from "./http-fixture.ts";
import type { HttpFixture } from "./http-fixture.ts";

// The world's generated URIs name hosts under `.localnet`, which do not exist. A real resolver may answer that
// quickly or slowly (or not at all, off-line), so this file's resolver says so at once, as one would (NXDOMAIN);
// every other name, and every IP literal the local fixture uses, goes to the real lookup.
vi.mock("node:dns", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:dns")>();
  const lookup = (hostname: string, options: unknown, callback: (err: Error | null, ...rest: unknown[]) => void) => {
    if (!hostname.endsWith(".localnet")) return (real.lookup as (...a: unknown[]) => void)(hostname, options, callback);
    const err = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND", hostname });
    process.nextTick(callback, err, []);
  };
  return { ...real, default: { ...real, lookup }, lookup };
});

/** The real httpGet, with each failure kept: what ended a fetch that `get` turned into null. */
function recordingGet() {
  const failures: HttpGetError[] = [];
  const get = (url: string, options: HttpGetOptions) =>
    httpGet(url, options).catch((err: HttpGetError) => {
      failures.push(err);
      throw err;
    });
  return { get, failures };
}

let web: HttpFixture;
const SENTINEL = {
  name: "Sentinel #1",
  description: "A sentinel.",
  image: "https://img.example/1.png",
  attributes: [],
};

beforeAll(async () => {
  web = await startHttpFixture();
  web.routes.set("/1.json", json(SENTINEL));
  web.routes.set("/slow.json", json(SENTINEL, 200, 400));
  web.routes.set("/stall.json", stall);
  web.routes.set("/huge.json", json({ description: "x".repeat(300 * 1024), image: "https://img.example/h.png" }));
  web.routes.set("/html", json("<html>not json</html>"));
  web.routes.set("/array.json", json([1, 2]));
  web.routes.set("/gone.json", json({ error: "gone" }, 410));
  web.routes.set("/to-file", redirect("file:///etc/passwd"));
  web.routes.set("/to-data", redirect("data:application/json,{}"));
  web.routes.set("/to-json", redirect("/1.json", 301));
  web.routes.set("/loop", redirect("/loop"));
  web.routes.set("/script-image.json", json({ description: "d", image: "javascript:alert(1)" }));
});
afterAll(async () => {
  await web.close();
});

/** A fetcher allowed to reach the loopback server. */
const local = (options = {}) => createOffchainJson({ allowPrivateNetworks: true, timeoutMs: 250, ...options });

describe("createOffchainJson", () => {
  it("reads description and image from a metadata JSON and caches it", async () => {
    const offchain = local();
    expect(await offchain.get(`${web.url}/1.json`)).toEqual({
      description: "A sentinel.",
      image: "https://img.example/1.png",
    });
    expect(await offchain.get(`${web.url}/1.json`)).toEqual({
      description: "A sentinel.",
      image: "https://img.example/1.png",
    });
    expect(web.hitsOf("/1.json")).toBe(1);
  });

  it("follows an http redirect, and shares one fetch between concurrent callers", async () => {
    const offchain = local();
    const results = await Promise.all([1, 2, 3].map(() => offchain.get(`${web.url}/to-json`)));
    expect(results.every((r) => r?.image === "https://img.example/1.png")).toBe(true);
    expect(web.hitsOf("/to-json")).toBe(1);
  });

  it("answers null on time when the host is slow, and keeps the failure briefly", async () => {
    const { get, failures } = recordingGet();
    const offchain = local({ get });
    expect(await offchain.get(`${web.url}/stall.json`)).toBeNull();
    // The fetch's own timeout ended it (not a network error, not the host), and the failure is kept.
    await vi.waitFor(() => expect(failures.map((f) => f.kind)).toEqual(["timeout"]));
    expect(await offchain.get(`${web.url}/stall.json`)).toBeNull();
    expect(web.hitsOf("/stall.json")).toBe(1);
    expect(failures).toHaveLength(1);
  });

  it("stops waiting at the caller's deadline while the fetch finishes in the background for the next caller", async () => {
    const offchain = local({ timeoutMs: 2000 });
    expect(await offchain.get(`${web.url}/slow.json`, { deadlineMs: 50 })).toBeNull();
    await new Promise((r) => setTimeout(r, 500));
    expect(await offchain.get(`${web.url}/slow.json`, { deadlineMs: 50 })).toMatchObject({
      description: "A sentinel.",
    });
    expect(web.hitsOf("/slow.json")).toBe(1);
  });

  it("refuses bodies over the cap, non-JSON, non-objects and HTTP errors", async () => {
    const offchain = local();
    for (const path of ["/huge.json", "/html", "/array.json", "/gone.json", "/missing.json"]) {
      expect([path, await offchain.get(`${web.url}${path}`)]).toEqual([path, null]);
    }
    await expect(
      httpGet(`${web.url}/huge.json`, { timeoutMs: 1000, maxBytes: 256 * 1024, allowPrivateNetworks: true }),
    ).rejects.toMatchObject({ kind: "too-large" });
  });

  it("never leaves http(s): no file:, data: or ipfs: URIs, and no redirects to them", async () => {
    const offchain = local();
    for (const uri of [
      "file:///etc/passwd",
      "ipfs://bafy/1.json",
      "ar://x",
      "data:application/json,{}",
      "",
      "not a url",
      `${web.url}/to-file`,
      `${web.url}/to-data`,
      `${web.url}/loop`,
    ]) {
      expect([uri, await offchain.get(uri)]).toEqual([uri, null]);
    }
    await expect(
      httpGet(`${web.url}/to-file`, { timeoutMs: 1000, maxBytes: 1024, allowPrivateNetworks: true }),
    ).rejects.toMatchObject({ kind: "scheme" });
    await expect(
      httpGet(`${web.url}/loop`, { timeoutMs: 1000, maxBytes: 1024, allowPrivateNetworks: true }),
    ).rejects.toMatchObject({ kind: "redirect" });
    expect(web.hitsOf("/loop")).toBe(4 + 4);
  });

  it("keeps script URLs out of the image field", async () => {
    expect(await local().get(`${web.url}/script-image.json`)).toEqual({ description: "d", image: "" });
    expect(safeImageUrl("data:image/png;base64,AAAA")).toBe("data:image/png;base64,AAAA");
    expect(safeImageUrl("data:text/html,<script>")).toBe("");
    expect(safeImageUrl(`https://x/${"a".repeat(3000)}`)).toBe("");
  });

  it("by default refuses loopback and private hosts, by IP and by name, before any request is sent", async () => {
    const before = web.hitsOf("/1.json");
    const offchain = createOffchainJson({ timeoutMs: 500 });
    expect(await offchain.get(`${web.url}/1.json`)).toBeNull();
    const port = new URL(web.url).port;
    expect(await offchain.get(`http://localhost:${port}/1.json`)).toBeNull();
    expect(web.hitsOf("/1.json")).toBe(before);
    await expect(httpGet(`http://localhost:${port}/1.json`, { timeoutMs: 500, maxBytes: 1024 })).rejects.toMatchObject({
      kind: "private-address",
    });
    await expect(httpGet(`http://[::1]:${port}/1.json`, { timeoutMs: 500, maxBytes: 1024 })).rejects.toBeInstanceOf(
      HttpGetError,
    );
  });

  it("classifies addresses", () => {
    for (const ip of [
      "127.0.0.1",
      "10.1.2.3",
      "172.20.0.1",
      "192.168.1.1",
      "169.254.169.254",
      "100.64.0.1",
      "0.0.0.0",
      "::1",
      "fe80::1",
      "fd00::1",
      "::ffff:10.0.0.1",
      "::ffff:127.0.0.1",
      "not-an-ip",
    ]) {
      expect([ip, isNonPublicAddress(ip)]).toEqual([ip, true]);
    }
    for (const ip of ["1.1.1.1", "8.8.8.8", "172.32.0.1", "2606:4700:4700::1111", "::ffff:8.8.8.8"])
      expect([ip, isNonPublicAddress(ip)]).toEqual([ip, false]);
  });

  it("refuses every special-purpose range, and the host's own addresses", () => {
    const special = [
      "192.0.2.1", // TEST-NET-1
      "198.51.100.7", // TEST-NET-2
      "203.0.113.9", // TEST-NET-3
      "198.18.0.1", // benchmarking
      "192.88.99.1", // 6to4 relay anycast
      "255.255.255.255", // broadcast
      "2002:c000:0204::1", // 6to4: reaches 192.0.2.4
      "2001::1", // Teredo
      "fec0::1", // site-local
      "2001:db8::1", // documentation
      "64:ff9b::a00:1", // NAT64 of 10.0.0.1
      "::", // unspecified
    ];
    for (const ip of special) expect([ip, isNonPublicAddress(ip)]).toEqual([ip, true]);
    const own = Object.values(networkInterfaces())
      .flat()
      .map((a) => a!.address.split("%")[0]);
    expect(own.length).toBeGreaterThan(0);
    for (const ip of own) expect([ip, isNonPublicAddress(ip)]).toEqual([ip, true]);
  });

  it("a host that does not exist (the world's generated URIs) is a null from the lookup, not the timeout", async () => {
    const { get, failures } = recordingGet();
    expect(await createOffchainJson({ get }).get("https://assets.solgate.localnet/sentinels/1.json")).toBeNull();
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({ kind: "network", message: expect.stringContaining("ENOTFOUND") });
  });

  it("aborts a body that arrives too slowly", async () => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"description":');
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const { port } = server.address() as AddressInfo;
    try {
      await expect(
        httpGet(`http://127.0.0.1:${port}/`, { timeoutMs: 150, maxBytes: 1024, allowPrivateNetworks: true }),
      ).rejects.toMatchObject({ kind: "timeout" });
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
