/**
 * A sick Geyser server for tests: an HTTP/2 gRPC proxy in front of a real Yellowstone server (the localnet's) that
 * passes the Subscribe stream message by message (5-byte gRPC envelopes) and can, on demand, send a malformed
 * message in place of each one (garbage), hold every message back 1.5 s (a stream lagging behind the JSON-RPC),
 * or go away (`kill`: sessions destroyed, port closed; start another on the same port to bring it back).
 */
import http2 from "node:http2";
import type { AddressInfo } from "node:net";

export type SickMode = "pass" | "garbage" | "lag";

/** Starts the proxy to `target` (the Yellowstone server's URL), on `port` (default: a free one). */
export async function startSickGeyser(target: string, port = 0) {
  let mode: SickMode = "pass";
  const upstream = http2.connect(target);
  upstream.on("error", () => {});
  const server = http2.createServer();
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (s) => {
    sessions.add(s);
    s.on("close", () => sessions.delete(s));
  });
  server.on("stream", (stream, headers) => {
    const forwarded: http2.OutgoingHttpHeaders = {};
    for (const [k, v] of Object.entries(headers))
      if (!k.startsWith(":") || k === ":method" || k === ":path") forwarded[k] = v;
    const up = upstream.request(forwarded);
    up.on("error", () => stream.destroy());
    stream.on("error", () => up.destroy());
    stream.on("close", () => up.destroy());
    stream.pipe(up);
    let buffered = Buffer.alloc(0);
    let lastDue = 0;
    let trailers: http2.OutgoingHttpHeaders = { "grpc-status": "0" };
    up.on("response", (h) => {
      const out: http2.OutgoingHttpHeaders = {};
      for (const [k, v] of Object.entries(h)) if (!k.startsWith(":") || k === ":status") out[k] = v;
      stream.respond(out, { waitForTrailers: true });
    });
    const send = (message: Buffer) => {
      if (stream.destroyed || stream.closed) return;
      if (mode === "garbage") {
        // A well-framed message whose protobuf is not: field 1 with wire type 7, which does not exist.
        stream.write(Buffer.from([0, 0, 0, 0, 2, 0x0f, 0x00]));
      } else if (mode === "lag" || lastDue > Date.now()) {
        // Held back 1.5 s; once well again, in order behind what is still held.
        const due = mode === "lag" ? Date.now() + 1500 : lastDue;
        lastDue = due;
        setTimeout(() => !stream.destroyed && stream.write(message), due - Date.now());
      } else {
        stream.write(message);
      }
    };
    up.on("data", (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 5) {
        const length = buffered.readUInt32BE(1);
        if (buffered.length < 5 + length) break;
        send(buffered.subarray(0, 5 + length));
        buffered = buffered.subarray(5 + length);
      }
    });
    up.on("trailers", (t: http2.IncomingHttpHeaders) => {
      trailers = {};
      for (const [k, v] of Object.entries(t)) if (!k.startsWith(":")) trailers[k] = v;
    });
    up.on("end", () => {
      if (!stream.destroyed) stream.end();
    });
    stream.on("wantTrailers", () => stream.sendTrailers(trailers));
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    port: (server.address() as AddressInfo).port,
    set: (next: SickMode) => {
      mode = next;
    },
    /** The server goes away: every session destroyed, the port closed. */
    kill: () =>
      new Promise<void>((resolve) => {
        for (const s of sessions) s.destroy();
        upstream.destroy();
        server.close(() => resolve());
      }),
  };
}
