/**
 * Sends a fuzz case's exact bytes with raw `node:http2` (h2c prior knowledge) or `node:http` and reads
 * the answer as its protocol states it: the gRPC status (headers, trailers, or a gRPC-Web trailer
 * frame), the Connect error code (JSON body or end-stream message), or the HTTP status. A server stream
 * is answered by its first message (then cancelled) or by its error.
 */
import http from "node:http";
import http2 from "node:http2";
import type { FuzzCase } from "./fuzz-cases.ts";

/** What came back: `grpc <code>`, `connect <code>`, `http <status>`, `stream open`, or a transport outcome. */
export interface Answer {
  key: string;
  /**
   * Whether it breaks the target: INTERNAL, UNKNOWN, HTTP 500, a missing status, no answer, or no answer at all
   * (a stream reset, a socket error or abort, a request the client could not send), unless `documentedReset`
   * says that reset is the gateway's stated answer to that case.
   */
  bad: boolean;
  detail: string;
}

const GRPC_CODES = [
  "ok",
  "canceled",
  "unknown",
  "invalid_argument",
  "deadline_exceeded",
  "not_found",
  "already_exists",
  "permission_denied",
  "resource_exhausted",
  "failed_precondition",
  "aborted",
  "out_of_range",
  "unimplemented",
  "internal",
  "unavailable",
  "data_loss",
  "unauthenticated",
];

/** A client for one gateway: a few h2c sessions, reconnected when one ends, and a keep-alive HTTP/1.1 agent. */
export function createRawClient(origin: string, options: { sessions: number; timeoutMs: number }) {
  const sessions: (http2.ClientHttp2Session | undefined)[] = Array(options.sessions).fill(undefined);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
  let next = 0;

  function session(): http2.ClientHttp2Session {
    const i = next++ % sessions.length;
    const s = sessions[i];
    if (s !== undefined && !s.closed && !s.destroyed) return s;
    const fresh = http2.connect(origin);
    fresh.on("error", () => {});
    fresh.on("close", () => {
      if (sessions[i] === fresh) sessions[i] = undefined;
    });
    // A GOAWAY (a protocol error we caused) retires the session; the next call opens another.
    fresh.on("goaway", () => {
      if (sessions[i] === fresh) sessions[i] = undefined;
    });
    sessions[i] = fresh;
    return fresh;
  }

  function send(c: FuzzCase): Promise<Answer> {
    return c.http2 ? sendHttp2(c) : sendHttp1(c);
  }

  function sendHttp2(c: FuzzCase): Promise<Answer> {
    return new Promise((resolve) => {
      let s: http2.ClientHttp2Session;
      try {
        s = session();
      } catch (e) {
        resolve({ key: "client error", bad: true, detail: String(e) });
        return;
      }
      let status = 0;
      let headers: http2.IncomingHttpHeaders = {};
      const chunks: Buffer[] = [];
      let done = false;
      const finish = (answer: Answer) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        if (!stream.closed) stream.close(http2.constants.NGHTTP2_CANCEL);
        resolve(answer);
      };
      let stream: http2.ClientHttp2Stream;
      try {
        stream = s.request({ ":method": c.method, ":path": c.path, ...c.headers }, { endStream: c.body === undefined });
      } catch (e) {
        resolve({ key: "client error", bad: true, detail: String(e) });
        return;
      }
      const timer = setTimeout(
        () => finish({ key: "no answer", bad: true, detail: `no answer within ${options.timeoutMs} ms` }),
        options.timeoutMs,
      );
      stream.on("error", () => {});
      stream.on("response", (h) => {
        headers = h;
        status = Number(h[":status"]);
      });
      stream.on("data", (chunk: Buffer) => {
        chunks.push(chunk);
        if (c.streaming && status === 200) {
          const early = firstStreamMessage(c, Buffer.concat(chunks), headers);
          if (early !== undefined) finish(early);
        }
      });
      stream.on("trailers", (t) => (headers = { ...headers, ...t }));
      stream.on("close", () => {
        if (status === 0) {
          const code = stream.rstCode ?? -1;
          finish({ key: `reset ${code}`, bad: !documentedReset(c, code), detail: "stream closed before a response" });
          return;
        }
        finish(classify(c, status, headers, Buffer.concat(chunks)));
      });
      if (c.body !== undefined) stream.end(c.body);
    });
  }

  function sendHttp1(c: FuzzCase): Promise<Answer> {
    return new Promise((resolve) => {
      let done = false;
      const finish = (answer: Answer) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        req.destroy();
        resolve(answer);
      };
      const url = new URL(origin);
      const req = http.request({
        host: url.hostname,
        port: url.port,
        method: c.method,
        path: c.path,
        agent,
        headers: { ...c.headers, ...(c.body === undefined ? {} : { "content-length": String(c.body.length) }) },
      });
      const timer = setTimeout(
        () => finish({ key: "no answer", bad: true, detail: `no answer within ${options.timeoutMs} ms` }),
        options.timeoutMs,
      );
      req.on("error", (e: NodeJS.ErrnoException) =>
        finish({ key: `socket ${e.code ?? e.message}`, bad: true, detail: e.message }),
      );
      req.on("response", (res) => {
        const chunks: Buffer[] = [];
        const status = res.statusCode ?? 0;
        res.on("data", (chunk: Buffer) => {
          chunks.push(chunk);
          if (c.streaming && status === 200) {
            const early = firstStreamMessage(c, Buffer.concat(chunks), res.headers as http2.IncomingHttpHeaders);
            if (early !== undefined) finish(early);
          }
        });
        res.on("end", () =>
          finish(
            classify(
              c,
              status,
              { ...res.headers, ...res.trailers } as http2.IncomingHttpHeaders,
              Buffer.concat(chunks),
            ),
          ),
        );
        res.on("error", () => finish({ key: "socket aborted", bad: true, detail: "response aborted" }));
      });
      req.end(c.body === undefined ? undefined : Buffer.from(c.body));
    });
  }

  return {
    send,
    close() {
      for (const s of sessions) s?.close();
      agent.destroy();
    },
  };
}

/**
 * Whether an HTTP/2 stream reset before any response is the gateway's documented answer to the case. None is:
 * every case the fuzz makes is a well-formed HTTP request (the mutations are in its bytes, headers, path and
 * query), and the gateway answers each with a status (docs/errors.md). Kept as the one place to name one.
 */
function documentedReset(_c: FuzzCase, _rstCode: number): boolean {
  return false;
}

/** For a server stream that is still open: its first message if it is not an end-of-stream one. */
function firstStreamMessage(c: FuzzCase, body: Buffer, headers: http2.IncomingHttpHeaders): Answer | undefined {
  if (c.protocol === "rest") {
    // SSE: the first event (a record or an error event) is the answer.
    const text = body.toString("utf8");
    if (!text.includes("\n\n")) return undefined;
    if (text.startsWith("event: error")) return classifyJson("rest-sse", text.slice(text.indexOf("data:") + 5));
    return { key: "stream open", bad: false, detail: "" };
  }
  if (body.length < 5) return undefined;
  const flags = body[0];
  const length = body.readUInt32BE(1);
  if (body.length < 5 + length) return undefined;
  const as = answerProtocol(c, headers);
  const isEnd =
    as === "grpc-web" ? (flags & 0x80) !== 0 : as === "connect-stream" ? (flags & 0x02) !== 0 : as !== "grpc";
  if (isEnd) return undefined; // the whole answer is the stream's end: classified when it closes
  if (headers["grpc-status"] !== undefined) return undefined;
  return { key: "stream open", bad: false, detail: "" };
}

/** The protocol of an answer: what the server made of the request, as its content type says. */
function answerProtocol(
  c: FuzzCase,
  headers: http2.IncomingHttpHeaders,
): "grpc" | "grpc-web" | "connect-stream" | "connect" | "rest" {
  const type = String(headers["content-type"] ?? "");
  if (type.startsWith("application/grpc-web")) return "grpc-web";
  if (type.startsWith("application/grpc")) return "grpc";
  if (type.startsWith("application/connect+")) return "connect-stream";
  return c.protocol === "rest" ? "rest" : "connect";
}

/** The answer of a finished exchange. */
export function classify(c: FuzzCase, status: number, headers: http2.IncomingHttpHeaders, body: Buffer): Answer {
  const snippet = body.subarray(0, 300).toString("utf8");
  const whole = body.toString("utf8");
  if (status === 500 || status === 0) return { key: `http ${status}`, bad: true, detail: snippet };
  const answeredAs = answerProtocol(c, headers);
  if (answeredAs === "rest") {
    if (status >= 400) return classifyJson(`http ${status}`, whole);
    return { key: `http ${status}`, bad: false, detail: "" };
  }
  if (answeredAs === "grpc" || answeredAs === "grpc-web") {
    let code = headers["grpc-status"] as string | undefined;
    let message = (headers["grpc-message"] as string | undefined) ?? "";
    if (code === undefined && answeredAs === "grpc-web") {
      // The trailers are the last frame of the body (flag 0x80), as HTTP/1.1-style header lines.
      for (let at = 0; at + 5 <= body.length; ) {
        const len = body.readUInt32BE(at + 1);
        if ((body[at] & 0x80) !== 0) {
          const text = body.subarray(at + 5, at + 5 + len).toString("utf8");
          code = /grpc-status:\s*(\d+)/i.exec(text)?.[1];
          message = /grpc-message:\s*(.*)/i.exec(text)?.[1] ?? "";
        }
        at += 5 + len;
      }
    }
    if (status !== 200) return { key: `http ${status}`, bad: status >= 500 && status !== 503, detail: snippet };
    if (code === undefined) return { key: `${answeredAs} no status`, bad: true, detail: snippet };
    const name = GRPC_CODES[Number(code)] ?? `code ${code}`;
    return { key: `grpc ${name}`, bad: name === "internal" || name === "unknown", detail: decodeURIComponent(message) };
  }
  // Connect: unary errors are a JSON body with the HTTP status; stream errors an end-stream message.
  if (answeredAs === "connect-stream" && status === 200) {
    for (let at = 0; at + 5 <= body.length; ) {
      const len = body.readUInt32BE(at + 1);
      if ((body[at] & 0x02) !== 0) return classifyJson("connect", body.subarray(at + 5, at + 5 + len).toString("utf8"));
      at += 5 + len;
    }
    return { key: "connect stream without end", bad: true, detail: snippet };
  }
  if (status === 200) return { key: "connect ok", bad: false, detail: "" };
  return classifyJson(`connect ${status}`, whole);
}

function classifyJson(prefix: string, text: string): Answer {
  let code = "?";
  try {
    const parsed = JSON.parse(text) as { code?: string; error?: { code?: string } };
    code = parsed.error?.code ?? parsed.code ?? "?";
  } catch {
    code = "(not JSON)";
  }
  return { key: `${prefix} ${code}`, bad: code === "internal" || code === "unknown", detail: text.slice(0, 300) };
}
