/**
 * What the router's interceptors cost a cached read, in process and without a socket: GetFees (an
 * implementation answering one shared message) called through the unary invoker with the server's interceptor
 * list (observe with metrics, drain, deadline where the checkout has it, errors, auth with the key checked
 * before, the gate, validation), against the same call with no interceptor, in CPU microseconds per call. The
 * noise of a shared machine's sockets and scheduler is left out, so a change of a fraction of a microsecond
 * per call shows (hot-path-bench.ts cannot see one).
 *
 *   npx node test/bench/interceptor-micro-bench.ts [--calls 200000] [--rounds 5] [--root <checkout>]
 *
 * --root: the interceptors of another checkout (a worktree of an older commit), with this bench.
 */
import path from "node:path";
import { parseArgs } from "node:util";
import { create } from "@bufbuild/protobuf";
import { createConnectRouter, createContextValues } from "@connectrpc/connect";
import type { Interceptor } from "@connectrpc/connect";
import { FeeService, GetFeesRequestSchema, GetFeesResponseSchema } from "../../gen/solgate/v1/fee_service_pb.js";

const { values: args } = parseArgs({
  options: {
    calls: { type: "string", default: "200000" },
    rounds: { type: "string", default: "5" },
    root: { type: "string" },
  },
});
const CALLS = Number(args.calls);
const ROUNDS = Number(args.rounds);
const root = path.resolve(args.root ?? path.join(import.meta.dirname, "../.."));
const load = (file: string) => import(path.join(root, "src/server", file));

const interceptorsModule = await load("interceptors.ts");
const auth = await load("auth.ts");
const gate = await load("request-gate.ts");
const validation = await load("request-validation.ts");
const invokerModule = await load("unary-invoker.ts");
const { createLogger } = await load("logger.ts");
const { createMetrics } = await load("metrics.ts");

const logger = createLogger({ level: "warn" });
const interceptors: Interceptor[] = [
  interceptorsModule.createObserveInterceptor({ logger, metrics: createMetrics() }),
  interceptorsModule.createDrainInterceptor(new AbortController().signal),
  // Round 3 added it; an older checkout has none.
  ...(interceptorsModule.createDeadlineInterceptor === undefined
    ? []
    : [interceptorsModule.createDeadlineInterceptor()]),
  interceptorsModule.createErrorInterceptor(logger),
  auth.createAuthInterceptor(auth.createApiKeyChecker(["bench-key"])),
  gate.createGateInterceptor(),
  validation.createValidationInterceptor(),
];
const answer = create(GetFeesResponseSchema, {});
const recording = invokerModule.recordingRouter(createConnectRouter());
recording.router.service(FeeService, { getFees: () => answer, estimateFees: () => answer } as never);
const withInterceptors = invokerModule.createUnaryInvoker({ impls: recording.impls, interceptors });
const without = invokerModule.createUnaryInvoker({ impls: recording.impls, interceptors: [] });
const input = create(GetFeesRequestSchema, { chain: "localnet" });
const header = new Headers({ authorization: "Bearer bench-key" });
const signal = new AbortController().signal;

async function perCall(invoker: typeof withInterceptors): Promise<number> {
  const start = process.cpuUsage();
  for (let i = 0; i < CALLS; i++) {
    const values = createContextValues();
    // As REST calls: the key already checked by the layer in front.
    values.set(auth.CHECKED_KEY, "default");
    await invoker.invoke(FeeService.method.getFees, input, header, signal, values);
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / CALLS;
}

console.log(`interceptor-micro-bench: ${CALLS} calls per round, ${ROUNDS} rounds, interceptors of ${root}`);
const rows: { with: number; without: number }[] = [];
await perCall(withInterceptors); // warm-up
await perCall(without);
for (let round = 0; round < ROUNDS; round++) {
  const w = await perCall(withInterceptors);
  const o = await perCall(without);
  rows.push({ with: w, without: o });
  console.log(`  round ${round + 1}: ${w.toFixed(2)} us per call with the interceptors, ${o.toFixed(2)} without`);
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const w = median(rows.map((r) => r.with));
const o = median(rows.map((r) => r.without));
console.log(
  `median: ${w.toFixed(2)} us with, ${o.toFixed(2)} us without: the interceptors cost ${(w - o).toFixed(2)} us per call`,
);
