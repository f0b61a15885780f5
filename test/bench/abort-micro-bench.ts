/**
 * What connect-node's per-request abort costs, in isolation. connect-node (2.2) aborts every request's
 * AbortController when the response closes (`universalRequestFromNodeRequest`), and connect's handlers end
 * each call's context with `context.abort()`: two reasonless aborts per RPC, each building a DOMException
 * (with a captured stack). Measured here, in one process, against the same controller aborted with a
 * reason made once, and against not aborting at all (what Solgate's own universal request does for a call
 * that ended normally; src/server/universal-request.ts).
 *
 *   npx node test/bench/abort-micro-bench.ts [--iterations 500000]
 */
import { parseArgs } from "node:util";

const { values } = parseArgs({ options: { iterations: { type: "string", default: "500000" } } });
const N = Number(values.iterations);
const REASON = new Error("the call has ended");

function time(label: string, fn: () => void): number {
  for (let i = 0; i < N / 10; i++) fn(); // warm-up
  const started = process.hrtime.bigint();
  for (let i = 0; i < N; i++) fn();
  const ns = Number(process.hrtime.bigint() - started) / N;
  console.log(`${label.padEnd(58)} ${ns.toFixed(0).padStart(6)} ns per request`);
  return ns;
}

const listener = () => {};
const reasonless = time("AbortController + listener + abort() (connect-node)", () => {
  const c = new AbortController();
  c.signal.addEventListener("abort", listener);
  c.abort();
});
const withReason = time("AbortController + listener + abort(reason made once)", () => {
  const c = new AbortController();
  c.signal.addEventListener("abort", listener);
  c.abort(REASON);
});
const never = time("AbortController + listener, not aborted", () => {
  const c = new AbortController();
  c.signal.addEventListener("abort", listener);
});
console.log(
  `reasonless abort / abort with a reason: ${(reasonless / withReason).toFixed(2)}; / not aborted: ${(reasonless / never).toFixed(2)}`,
);
console.log(
  `two reasonless aborts per RPC (request signal and handler context) cost ~${((2 * (reasonless - never)) / 1000).toFixed(1)} us per call more than none`,
);
