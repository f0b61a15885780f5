/**
 * `grpc.health.v1.Health` for load balancers and `grpc_health_probe`: Check, Watch and List over
 * a small status table. The empty service name stands for the whole server.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import type { ServiceImpl } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import {
  Health,
  HealthCheckResponseSchema,
  HealthCheckResponse_ServingStatus as ServingStatus,
} from "../../gen/grpc/health/v1/health_pb.js";
import type { HealthCheckResponse } from "../../gen/grpc/health/v1/health_pb.js";

export { ServingStatus };

/** The serving status of the server ("") and of each service, with change notification. */
export interface HealthState {
  /** The status of `service`, or undefined if it is not known. */
  get(service: string): ServingStatus | undefined;
  /** Sets one service's status (adding it if new) and notifies watchers. */
  set(service: string, status: ServingStatus): void;
  /** Sets every known service, the server ("") included, e.g. NOT_SERVING while draining. */
  setAll(status: ServingStatus): void;
  /** The whole table. */
  entries(): [string, ServingStatus][];
  /** Calls `listener` on every change until the returned function is called. */
  subscribe(listener: (service: string, status: ServingStatus) => void): () => void;
}

/** A table where the server and each of `services` start SERVING. */
export function createHealthState(services: readonly string[] = []): HealthState {
  const table = new Map<string, ServingStatus>([["", ServingStatus.SERVING]]);
  for (const s of services) table.set(s, ServingStatus.SERVING);
  const listeners = new Set<(service: string, status: ServingStatus) => void>();
  const set = (service: string, status: ServingStatus) => {
    if (table.get(service) === status) return;
    table.set(service, status);
    for (const l of listeners) l(service, status);
  };
  return {
    get: (service) => table.get(service),
    set,
    setAll(status) {
      for (const service of [...table.keys()]) set(service, status);
    },
    entries: () => [...table.entries()],
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

/**
 * Keeps every service's status in step with readiness (the checks of `/readyz`): SERVING while `ready()`
 * holds, NOT_SERVING otherwise, checked every `intervalMs`. The server's own entry ("") is left alone: it
 * says whether the process serves at all and goes NOT_SERVING only when it drains, like `/healthz`; a
 * client or balancer asking about a service gets that service's readiness. Returns a function that stops.
 */
export function followReadiness(state: HealthState, ready: () => boolean, intervalMs = 1000): () => void {
  const sync = () => {
    const status = ready() ? ServingStatus.SERVING : ServingStatus.NOT_SERVING;
    for (const [service] of state.entries()) if (service !== "") state.set(service, status);
  };
  sync();
  const timer = setInterval(sync, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** The Health service over `state`. */
export function createHealthServiceImpl(state: HealthState): ServiceImpl<typeof Health> {
  const response = (status: ServingStatus): HealthCheckResponse => create(HealthCheckResponseSchema, { status });
  return {
    check(req) {
      const status = state.get(req.service);
      if (status === undefined) throw new ConnectError(`unknown service ${JSON.stringify(req.service)}`, Code.NotFound);
      return response(status);
    },
    async *watch(req, ctx) {
      // Per the health protocol, an unknown service is not an error for Watch: it reports SERVICE_UNKNOWN
      // and keeps watching, in case the service appears.
      const queue: ServingStatus[] = [];
      let wake = () => {};
      const unsubscribe = state.subscribe((service, status) => {
        if (service !== req.service) return;
        queue.push(status);
        wake();
      });
      const onAbort = () => wake();
      ctx.signal.addEventListener("abort", onAbort);
      try {
        let last = state.get(req.service) ?? ServingStatus.SERVICE_UNKNOWN;
        yield response(last);
        while (!ctx.signal.aborted) {
          if (queue.length === 0) {
            await new Promise<void>((resolve) => {
              wake = resolve;
            });
            continue;
          }
          const status = queue.shift()!;
          if (status === last) continue;
          last = status;
          yield response(status);
        }
      } finally {
        unsubscribe();
        ctx.signal.removeEventListener("abort", onAbort);
      }
    },
    list() {
      return {
        statuses: Object.fromEntries(state.entries().map(([service, status]) => [service, response(status)])),
      };
    },
  };
}

export { Health };
