/**
 * The Geyser server's settings (`LOCALNET_GEYSER_*`), read once by config.ts.
 */

/** How the localnet serves yellowstone-grpc's `geyser.Geyser`. */
export interface GeyserConfig {
  /** Port of the h2c gRPC server; 0 picks a free one. */
  port: number;
  /** When set, every call must carry it in the `x-token` header (the plugin's `x_token`). */
  token: string | null;
  /** Updates held per client before it is cut off as "lagged" (the plugin's `channel_capacity`). */
  queueLimit: number;
  /** Slots kept for `from_slot` replay (the plugin's `replay_stored_slots`). */
  replaySlots: number;
  /** Milliseconds between the server's pings on every stream (the plugin: 10 s). */
  pingMs: number;
}

export const GEYSER_ENV = {
  port: "LOCALNET_GEYSER_PORT",
  token: "LOCALNET_GEYSER_TOKEN",
  queueLimit: "LOCALNET_GEYSER_QUEUE",
  pingMs: "LOCALNET_GEYSER_PING_MS",
} as const;

export const DEFAULT_GEYSER_CONFIG: GeyserConfig = {
  port: 10000,
  token: null,
  queueLimit: 250_000,
  replaySlots: 150,
  pingMs: 10_000,
};

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${name} must be an integer between ${min} and ${max}, got "${raw}"`);
  }
  return value;
}

/** Reads the settings; `LOCALNET_GEYSER_PORT=off` turns the server off (null). */
export function parseGeyserConfig(env: NodeJS.ProcessEnv): GeyserConfig | null {
  if (env[GEYSER_ENV.port] === "off") return null;
  const d = DEFAULT_GEYSER_CONFIG;
  return {
    port: integer(env, GEYSER_ENV.port, d.port, 0, 65535),
    token: env[GEYSER_ENV.token] || null,
    queueLimit: integer(env, GEYSER_ENV.queueLimit, d.queueLimit, 1, 100_000_000),
    replaySlots: d.replaySlots,
    pingMs: integer(env, GEYSER_ENV.pingMs, d.pingMs, 10, 3_600_000),
  };
}
