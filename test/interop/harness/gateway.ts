/**
 * Starts the real gateway the way `npm start` does (src/main.ts `startGateway`), on free ports on
 * loopback, with its embedded localnet (no upstream configured) and a known API key.
 */
import { Writable } from "node:stream";
import { loadConfig } from "../../../src/config.ts";
import { startGateway } from "../../../src/main.ts";
import type { Gateway } from "../../../src/main.ts";
import { createLogger } from "../../../src/server/logger.ts";

/** The key every interop client uses. */
export const INTEROP_API_KEY = "interop-key-5f0c2a9d";

/** A running gateway and how to reach it. */
export interface InteropGateway {
  gateway: Gateway;
  /** `http://127.0.0.1:PORT`. */
  url: string;
  /** `127.0.0.1:PORT`, for gRPC clients. */
  addr: string;
  apiKey: string;
  /** The embedded localnet's JSON-RPC URL. */
  localnetUrl: string;
  /** The gateway's log lines at warn and above (for failure messages). */
  logs: string[];
  close(): Promise<void>;
}

/** Starts the gateway and its localnet; `env` adds configuration (e.g. SOLGATE_CORS_ORIGINS). */
export async function startInteropGateway(env: Record<string, string> = {}): Promise<InteropGateway> {
  const config = loadConfig({
    PORT: "0",
    HOST: "127.0.0.1",
    METRICS_PORT: "0",
    SOLGATE_API_KEYS: INTEROP_API_KEY,
    LOG_LEVEL: "warn",
    ...env,
  });
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs.push(
        ...chunk
          .toString()
          .split("\n")
          .filter((l) => l !== ""),
      );
      done();
    },
  });
  const gateway = await startGateway(config, createLogger({ level: config.logLevel, destination: sink }));
  if (gateway.localnetUrl === undefined) {
    await gateway.close();
    throw new Error("the gateway started without its localnet");
  }
  return {
    gateway,
    url: `http://127.0.0.1:${gateway.port}`,
    addr: `127.0.0.1:${gateway.port}`,
    apiKey: INTEROP_API_KEY,
    localnetUrl: gateway.localnetUrl,
    logs,
    close: () => gateway.close(),
  };
}
