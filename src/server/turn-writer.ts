/**
 * Answers written together at the end of the event-loop turn, not each as soon as it is ready.
 *
 * A client on the same host (a load balancer beside the gateway, a sidecar, a load generator) is woken by
 * every write that finds it asleep, and the writer pays for the wake-up inside its own `write` call. When
 * each answer is written the moment it is ready, the client has gone back to sleep by the next one, so
 * every answer costs a wake-up: profiled under load, a fifth of the gateway's CPU was the kernel waking
 * the reader (`sock_def_readable`), against 7% for a bare Node server. Written together after the turn's
 * I/O (a `setImmediate`), the answers of one turn cost one wake-up, and a busy gateway's turns hold many.
 * An answer waits at most for the rest of its turn: microseconds, and nothing when it is alone.
 *
 * uWebSockets corks every socket for the turn for the same reason. Node cannot: `ServerResponse.end()`
 * uncorks its socket fully, so the write calls themselves are what waits here.
 */
import type { NodeResponse } from "./http-handler.ts";

/** Queues `write` (which writes `res`'s answer) for the end of this turn. */
export type TurnWriter = (res: NodeResponse, write: () => void) => void;

/**
 * A writer whose queued writes run, in the order queued, after the turn's I/O callbacks. A write that
 * throws (a header value Node refuses) destroys its response and is reported to `onError`; the others run.
 */
export function createTurnWriter(onError: (err: unknown, res: NodeResponse) => void): TurnWriter {
  let responses: NodeResponse[] = [];
  let writes: (() => void)[] = [];
  const flush = () => {
    const batch = writes;
    const owners = responses;
    writes = [];
    responses = [];
    for (let i = 0; i < batch.length; i++) {
      try {
        batch[i]();
      } catch (err) {
        owners[i].destroy();
        onError(err, owners[i]);
      }
    }
  };
  return (res, write) => {
    if (writes.length === 0) setImmediate(flush);
    responses.push(res);
    writes.push(write);
  };
}

/** Writes at once: for callers that are given no turn writer. */
export const writeNow: TurnWriter = (_res, write) => write();
