import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { NodeResponse } from "../../src/server/http-handler.ts";
import { createTurnWriter } from "../../src/server/turn-writer.ts";

const turnEnd = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("the turn writer", () => {
  let server: http.Server | undefined;
  afterEach(() => server?.close());

  it("writes nothing during the turn, then every write queued in it, in order", async () => {
    const errors: unknown[] = [];
    const writer = createTurnWriter((err) => errors.push(err));
    const written: string[] = [];
    const res = {} as NodeResponse;
    writer(res, () => written.push("a"));
    await Promise.resolve().then(() => writer(res, () => written.push("b")));
    await new Promise<void>((r) =>
      process.nextTick(() => {
        writer(res, () => written.push("c"));
        r();
      }),
    );
    expect(written).toEqual([]);
    await turnEnd();
    expect(written).toEqual(["a", "b", "c"]);
    // A later turn's writes are a batch of their own.
    writer(res, () => written.push("d"));
    expect(written).toEqual(["a", "b", "c"]);
    await turnEnd();
    expect(written).toEqual(["a", "b", "c", "d"]);
    expect(errors).toEqual([]);
  });

  it("resets a response whose write throws, reports it, and still writes the others", async () => {
    const errors: unknown[] = [];
    const writer = createTurnWriter((err) => errors.push(err));
    let requests = 0;
    server = http.createServer((req, res) => {
      const bad = req.url === "/bad";
      requests++;
      writer(res, () => {
        // A header value Node refuses: writeHead throws.
        res.writeHead(200, bad ? { "x-broken": "a\nb" } : { "content-type": "text/plain" }).end("fine");
      });
    });
    await new Promise<void>((r) => server!.listen(0, "127.0.0.1", r));
    const { port } = server.address() as AddressInfo;
    const [bad, good] = await Promise.allSettled([
      fetch(`http://127.0.0.1:${port}/bad`).then((r) => r.text()),
      fetch(`http://127.0.0.1:${port}/good`).then((r) => r.text()),
    ]);
    expect(requests).toBe(2);
    expect(bad.status).toBe("rejected");
    expect(good).toEqual({ status: "fulfilled", value: "fine" });
    expect(errors).toHaveLength(1);
    expect((errors[0] as NodeJS.ErrnoException).code).toBe("ERR_INVALID_CHAR");
  });
});
