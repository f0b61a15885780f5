/**
 * Authentication before parsing, and bad bytes as INVALID_ARGUMENT: malformed protobuf and broken envelopes sent over
 * every protocol to a unary method, a server-streaming method on the router and the lean gRPC
 * stream path. A wrong key is UNAUTHENTICATED whatever the body; a right key with bad bytes is
 * INVALID_ARGUMENT with a clean message; nothing is INTERNAL.
 */
import http2 from "node:http2";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TransactionService } from "../../gen/solgate/v1/transaction_service_pb.js";
import { streamRoute } from "../../src/server/grpc-stream-path.ts";
import { API_KEY, SHORT_SIGNATURE, startTestServer, type TestServer } from "./helpers.ts";

const watchRoute = streamRoute({
  method: TransactionService.method.watchStatus,
  async *handle() {
    yield { event: { case: "heartbeat" as const, value: { slot: 1n } } };
  },
});

/** Field 1 (a string in both requests below) holding bytes that are not UTF-8. */
const BAD_UTF8 = Uint8Array.of(0x0a, 0x02, 0xff, 0xfe);
/** A length-delimited field whose length runs past the end. */
const TRUNCATED = Uint8Array.of(0x0a, 0x7f, 0x41);
/** A field with wire type 7, which does not exist. */
const BAD_WIRE_TYPE = Uint8Array.of(0x0f, 0x01);

const UNARY = "/solgate.v1.ProgramService/ListProgramAccounts";
const STREAM = "/solgate.v1.TransactionService/WatchStatus";

type Protocol = "grpc" | "grpc-web" | "connect" | "connect-stream";

function envelope(message: Uint8Array): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt32BE(message.length, 1);
  return Buffer.concat([head, message]);
}

/** Sends `message` as the one request message over `protocol` on HTTP/2; resolves with the code and message. */
function call(
  url: string,
  protocol: Protocol,
  path: string,
  message: Uint8Array,
  key: string,
  framed?: Buffer,
  extraHeaders: Record<string, string> = {},
): Promise<{ code: string; message: string; messages: number }> {
  const contentType = {
    grpc: "application/grpc",
    "grpc-web": "application/grpc-web+proto",
    connect: "application/proto",
    "connect-stream": "application/connect+proto",
  }[protocol];
  const body = framed ?? (protocol === "connect" ? Buffer.from(message) : envelope(message));
  return new Promise((resolve, reject) => {
    const session = http2.connect(url);
    session.on("error", reject);
    const req = session.request({
      ":method": "POST",
      ":path": path,
      "content-type": contentType,
      authorization: `Bearer ${key}`,
      ...(protocol === "grpc" ? { te: "trailers" } : {}),
      ...(protocol.startsWith("connect") ? { "connect-protocol-version": "1" } : {}),
      ...extraHeaders,
    });
    let headers: http2.IncomingHttpHeaders = {};
    let trailers: http2.IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    req.on("response", (h) => (headers = h));
    req.on("trailers", (t) => (trailers = t));
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("error", reject);
    req.on("end", () => {
      session.close();
      const data = Buffer.concat(chunks);
      let messages = 0;
      for (let at = 0; protocol !== "connect" && at + 5 <= data.length; at += 5 + data.readUInt32BE(at + 1))
        if (data[at] === 0) messages++;
      resolve({ ...decode(protocol, headers, trailers, data), messages });
    });
    req.end(body);
  });
}

const CODE_NAMES: Record<string, string> = {
  "3": "invalid_argument",
  "13": "internal",
  "16": "unauthenticated",
  "0": "ok",
};

function decode(
  protocol: Protocol,
  headers: http2.IncomingHttpHeaders,
  trailers: http2.IncomingHttpHeaders,
  data: Buffer,
): { code: string; message: string } {
  if (protocol === "connect") {
    if (Number(headers[":status"]) === 200) return { code: "ok", message: "" };
    const json = JSON.parse(data.toString()) as { code: string; message: string };
    return { code: json.code, message: json.message };
  }
  // Walk the envelopes; the last one carries the status in gRPC-Web (trailers) and Connect streaming (end of stream).
  let last: { flags: number; payload: Buffer } | undefined;
  for (let at = 0; at + 5 <= data.length; ) {
    const length = data.readUInt32BE(at + 1);
    last = { flags: data[at], payload: data.subarray(at + 5, at + 5 + length) };
    at += 5 + length;
  }
  if (protocol === "connect-stream") {
    const end = JSON.parse(last?.payload.toString() ?? "{}") as { error?: { code: string; message: string } };
    return end.error === undefined ? { code: "ok", message: "" } : { code: end.error.code, message: end.error.message };
  }
  const fields: Record<string, string> = {};
  for (const source of [headers, trailers]) {
    for (const [k, v] of Object.entries(source)) if (typeof v === "string") fields[k] = v;
  }
  if (protocol === "grpc-web" && last !== undefined && (last.flags & 0x80) !== 0) {
    for (const line of last.payload.toString().split("\r\n")) {
      const i = line.indexOf(":");
      if (i > 0) fields[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
    }
  }
  return {
    code: CODE_NAMES[fields["grpc-status"]] ?? `grpc-status ${fields["grpc-status"]}`,
    message: decodeURIComponent(fields["grpc-message"] ?? ""),
  };
}

describe("bad bytes and authentication before parsing", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ streamRoutes: [watchRoute] });
  });
  afterAll(() => t.listening.close({ timeoutMs: 500 }));

  const cases: [Protocol, string][] = [
    ["grpc", UNARY],
    ["grpc-web", UNARY],
    ["connect", UNARY],
    ["grpc", STREAM], // the lean path
    ["grpc-web", STREAM],
    ["connect-stream", STREAM],
  ];
  for (const [protocol, path] of cases) {
    it(`${protocol} ${path}: a wrong key is UNAUTHENTICATED, bad bytes with a right key INVALID_ARGUMENT`, async () => {
      for (const bytes of [BAD_UTF8, TRUNCATED, BAD_WIRE_TYPE]) {
        expect(
          await call(t.url, protocol, path, bytes, "wrong-key"),
          `wrong key, ${Buffer.from(bytes).toString("hex")}`,
        ).toMatchObject({ code: "unauthenticated" });
        const answer = await call(t.url, protocol, path, bytes, API_KEY);
        expect(answer.code, `right key, ${Buffer.from(bytes).toString("hex")}: ${answer.message}`).toBe(
          "invalid_argument",
        );
        expect(answer.message).toMatch(/^the request is not a valid solgate\.v1\.\w+ message/);
      }
    });
  }
});

describe("broken envelopes", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ streamRoutes: [watchRoute] });
  });
  afterAll(() => t.listening.close({ timeoutMs: 500 }));

  /** A valid ListProgramAccounts / WatchStatus message: field 2 (a string), "x". */
  const VALID = Uint8Array.of(0x12, 0x01, 0x78);
  const withFlags = (flags: number) => Buffer.concat([Buffer.of(flags), envelope(VALID).subarray(1)]);
  const withLength = (length: number, message: Uint8Array = VALID) => {
    const framed = envelope(message);
    framed.writeUInt32BE(length, 1);
    return framed;
  };
  const BROKEN: [string, Buffer][] = [
    ["marked compressed with no grpc-encoding", withFlags(0x01)],
    ["an unknown flag", withFlags(0x02)],
    ["a trailer flag", withFlags(0x80)],
    ["a length prefix shorter than the message (the rest a cut envelope)", withLength(2)],
    [
      "a length prefix that cuts the message inside a field",
      withLength(3, Uint8Array.of(0x12, 0x05, 0x78, 0x78, 0x78, 0x78, 0x78)),
    ],
    ["a length prefix promising more than is sent", withLength(100)],
    ["a prefix cut short", envelope(VALID).subarray(0, 3)],
  ];
  const protocols: [Protocol, string][] = [
    ["grpc", UNARY],
    ["grpc-web", UNARY],
    ["grpc", STREAM], // the lean path
    ["grpc-web", STREAM],
    ["connect-stream", STREAM],
  ];
  for (const [protocol, path] of protocols) {
    it(`${protocol} ${path}: INVALID_ARGUMENT (never INTERNAL) with a right key, UNAUTHENTICATED with a wrong one`, async () => {
      for (const [what, framed] of BROKEN) {
        expect(await call(t.url, protocol, path, VALID, "wrong-key", framed), `wrong key, ${what}`).toMatchObject({
          code: "unauthenticated",
        });
        const answer = await call(t.url, protocol, path, VALID, API_KEY, framed);
        expect(answer.code, `${what}: ${answer.message}`).toBe("invalid_argument");
      }
    });
  }
});

describe("bad bytes in compressed requests and enveloped JSON", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ streamRoutes: [watchRoute] });
  });
  afterAll(() => t.listening.close({ timeoutMs: 500 }));

  const framed = (flags: number, message: Uint8Array) =>
    Buffer.concat([Buffer.of(flags), envelope(message).subarray(1)]);
  const gzip = (message: Uint8Array) => gzipSync(Buffer.from(message));
  const cases: [string, Protocol, string, Buffer, Record<string, string>][] = [];
  for (const [protocol, path] of [
    ["grpc", UNARY],
    ["grpc-web", UNARY],
    ["grpc", STREAM],
    ["grpc-web", STREAM],
  ] as [Protocol, string][]) {
    cases.push([
      `uncompressed bad bytes, gzip named`,
      protocol,
      path,
      framed(0, BAD_UTF8),
      { "grpc-encoding": "gzip" },
    ]);
    cases.push([`gzip of bad bytes`, protocol, path, framed(1, gzip(BAD_UTF8)), { "grpc-encoding": "gzip" }]);
    cases.push([
      `gzip of a truncated message`,
      protocol,
      path,
      framed(1, gzip(TRUNCATED)),
      { "grpc-encoding": "gzip" },
    ]);
    cases.push([`not gzip at all`, protocol, path, framed(1, Uint8Array.of(1, 2, 3)), { "grpc-encoding": "gzip" }]);
  }
  cases.push([`gzip of bad bytes`, "connect", UNARY, gzip(BAD_UTF8), { "content-encoding": "gzip" }]);
  cases.push([
    `gzip of bad bytes`,
    "connect-stream",
    STREAM,
    framed(1, gzip(BAD_UTF8)),
    { "connect-content-encoding": "gzip" },
  ]);
  cases.push([
    `uncompressed bad bytes, gzip named`,
    "connect-stream",
    STREAM,
    framed(0, BAD_UTF8),
    { "connect-content-encoding": "gzip" },
  ]);
  const json = Buffer.from('{"signature":"x"}');
  cases.push([
    `JSON marked compressed, no encoding named`,
    "connect-stream",
    STREAM,
    framed(1, json),
    { "content-type": "application/connect+json" },
  ]);
  cases.push([
    `JSON with a length prefix past its end`,
    "connect-stream",
    STREAM,
    framed(0, json).subarray(0, 10),
    { "content-type": "application/connect+json" },
  ]);
  cases.push([
    `JSON marked compressed, no encoding named`,
    "grpc",
    UNARY,
    framed(1, json),
    { "content-type": "application/grpc+json" },
  ]);
  cases.push([
    `Connect JSON that is not gzip under content-encoding gzip`,
    "connect",
    UNARY,
    Buffer.from("{"),
    { "content-type": "application/json", "content-encoding": "gzip" },
  ]);
  for (const [what, protocol, path, body, headers] of cases) {
    it(`${protocol} ${path}, ${what} ${JSON.stringify(headers)}: INVALID_ARGUMENT, never INTERNAL`, async () => {
      const answer = await call(t.url, protocol, path, new Uint8Array(0), API_KEY, body, headers);
      expect(answer.code, answer.message).toBe("invalid_argument");
    });
  }
});

describe("deadlines longer than Node's timers", () => {
  let t: TestServer;
  /** A lean-path watch that takes 60 ms and ends early if its call is aborted (as a deadline does). */
  const slowWatch = streamRoute({
    method: TransactionService.method.watchStatus,
    async *handle(_request, signal) {
      for (let slot = 1n; slot <= 3n; slot++) {
        await new Promise((r) => setTimeout(r, 20));
        if (signal.aborted) return;
        yield { event: { case: "heartbeat" as const, value: { slot } } };
      }
    },
  });
  beforeAll(async () => {
    t = await startTestServer({ streamRoutes: [slowWatch] });
  });
  afterAll(() => t.listening.close({ timeoutMs: 500 }));

  // 99999999 s (about 3 years) is a valid gRPC timeout, 9999999999 ms a valid Connect one; Node's
  // setTimeout fires at once for anything beyond 2^31-1 ms. The router's watch (test helpers) runs 60 ms.
  const SHORT = Uint8Array.of(0x12, SHORT_SIGNATURE.length, ...Buffer.from(SHORT_SIGNATURE));
  const cases: [Protocol, Record<string, string>][] = [
    ["grpc", { "grpc-timeout": "99999999S" }], // the lean path
    ["grpc-web", { "grpc-timeout": "99999999S" }],
    ["connect-stream", { "connect-timeout-ms": "9999999999" }],
  ];
  for (const [protocol, headers] of cases) {
    it(`${protocol} ${STREAM} with ${JSON.stringify(headers)} runs as without a deadline`, async () => {
      const answer = await call(t.url, protocol, STREAM, SHORT, API_KEY, undefined, headers);
      // All three heartbeats: a deadline that fired at once would end the watch after the first.
      expect(answer, answer.message).toMatchObject({ code: "ok", messages: 3 });
    });
  }
});

describe("a call without a key, as real clients frame it", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ streamRoutes: [watchRoute] });
  });
  afterAll(() => t.listening.close({ timeoutMs: 500 }));

  const connectJson = (headers: Record<string, string>, body: Buffer) =>
    fetch(`${t.url}${UNARY}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: new Blob([new Uint8Array(body)]),
    });

  it("is UNAUTHENTICATED for a Connect JSON body with its content-length (as browsers send it)", async () => {
    const res = await connectJson(
      { "content-length": "69" },
      Buffer.from(JSON.stringify({ programId: "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA", limit: 5 }).padEnd(69)),
    );
    expect(res.status).toBe(401);
    expect(((await res.json()) as { code: string }).code).toBe("unauthenticated");
  });

  it("is UNAUTHENTICATED for a gzip-compressed Connect body (as buf curl may send it)", async () => {
    const body = gzipSync(Buffer.from(JSON.stringify({ programId: "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA" })));
    const res = await connectJson({ "content-encoding": "gzip" }, body);
    expect(res.status).toBe(401);
    expect(((await res.json()) as { code: string }).code).toBe("unauthenticated");
  });
});
