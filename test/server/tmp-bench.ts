import http2 from "node:http2";
import * as grpc from "@grpc/grpc-js";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { ListProgramAccountsRequestSchema, ListProgramAccountsResponseSchema, ProgramService } from "../../gen/solgate/v1/program_service_pb.js";
import { API_KEY, startTestServer, TOKEN_PROGRAM, testRoutes } from "./helpers.ts";

import { createLogger } from "../../src/server/logger.ts";
const t = await startTestServer();
const t2 = await startTestServer({ logger: createLogger({ level: "silent" }) });
const bare = http2.createServer(connectNodeAdapter({ routes: testRoutes }));
await new Promise<void>((r) => bare.listen(0, "127.0.0.1", r));
const barePort = (bare.address() as any).port;
const req = create(ListProgramAccountsRequestSchema, { programId: TOKEN_PROGRAM });
function caller(port: number) {
  const client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  const md = new grpc.Metadata(); md.set("authorization", `Bearer ${API_KEY}`);
  return { client, one: () => new Promise<void>((res, rej) => client.makeUnaryRequest("/solgate.v1.ProgramService/ListProgramAccounts",
    (m: typeof req) => Buffer.from(toBinary(ListProgramAccountsRequestSchema, m)), (b: Buffer) => fromBinary(ListProgramAccountsResponseSchema, b), req, md, (e) => e ? rej(e) : res())) };
}
async function run(name: string, fn: () => Promise<void>, seconds = 3, conc = 50) {
  const lat: number[] = []; const end = Date.now() + seconds * 1000; let n = 0;
  await Promise.all(Array.from({ length: conc }, async () => { while (Date.now() < end) { const s = performance.now(); await fn(); lat.push(performance.now() - s); n++; } }));
  lat.sort((a, b) => a - b);
  console.log(name, Math.round(n / seconds), "req/s p50", lat[Math.floor(lat.length * 0.5)].toFixed(1), "p99", lat[Math.floor(lat.length * 0.99)].toFixed(1));
}
const a = caller(barePort), b = caller(t.port), c = caller(t2.port);
for (let i = 0; i < 2; i++) { await run("bare connect h2 ", a.one); await run("solgate full    ", b.one); await run("solgate nolog   ", c.one); }
a.client.close(); b.client.close(); bare.close();
await t.listening.close({ timeoutMs: 100 });
