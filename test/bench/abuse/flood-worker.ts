/**
 * The idle-connection flood, in a process of its own so its thousands of sockets cost the measuring
 * client nothing: opens `--count` HTTP/2 connections from `--from` (a loopback address) to `--origin`,
 * opens no stream on them, and PINGs each every `--ping-ms`. Prints one JSON line when the flood is up
 * (`{"up":true,"open":..,"refused":..}`), then on stdin's end (or after `--hold-s`) closes them all and
 * prints the final counts, including how many the server closed meanwhile.
 * Run by abuse-bench.ts: npx node test/bench/abuse/flood-worker.ts --origin http://127.0.0.1:8080 --from 127.0.0.2 --count 3000
 */
import http2 from "node:http2";
import net from "node:net";
import { parseArgs } from "node:util";

const { values: args } = parseArgs({
  options: {
    origin: { type: "string" },
    from: { type: "string", default: "127.0.0.2" },
    count: { type: "string", default: "3000" },
    "ping-ms": { type: "string", default: "1000" },
    "hold-s": { type: "string", default: "600" },
    batch: { type: "string", default: "200" },
  },
});
const count = Number(args.count);
const sessions = new Set<http2.ClientHttp2Session>();
let refused = 0;
let closedByServer = 0;
let stopping = false;

/** Opens one connection; resolves true once the server's SETTINGS arrive, false if it is closed first. */
function open(): Promise<boolean> {
  return new Promise((resolve) => {
    const target = new URL(args.origin!);
    const session = http2.connect(target, {
      createConnection: () =>
        net.connect({ host: target.hostname, port: Number(target.port), localAddress: args.from }),
    });
    let up = false;
    session.on("error", () => {});
    session.once("remoteSettings", () => {
      up = true;
      sessions.add(session);
      resolve(true);
    });
    session.once("close", () => {
      sessions.delete(session);
      if (!up) {
        refused++;
        resolve(false);
      } else if (!stopping) closedByServer++;
    });
    setTimeout(() => {
      if (!up) session.destroy();
    }, 10_000);
  });
}

for (let opened = 0; opened < count; ) {
  const n = Math.min(Number(args.batch), count - opened);
  await Promise.all(Array.from({ length: n }, open));
  opened += n;
}
const ping = setInterval(() => {
  for (const s of sessions) if (!s.closed && !s.destroyed) s.ping(() => {});
}, Number(args["ping-ms"]));
console.log(JSON.stringify({ up: true, open: sessions.size, refused }));

await new Promise<void>((resolve) => {
  const timer = setTimeout(resolve, Number(args["hold-s"]) * 1000);
  process.stdin.on("end", () => {
    clearTimeout(timer);
    resolve();
  });
  process.stdin.resume();
});
stopping = true;
clearInterval(ping);
const stillOpen = sessions.size;
await Promise.all([...sessions].map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
console.log(JSON.stringify({ done: true, stillOpen, refused, closedByServer }));
process.exit(0);
