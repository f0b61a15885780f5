/**
 * Structured JSON logs (pino), one line per event. Authorization headers and API keys never reach
 * a log line: request logging takes named fields only, and the redaction below catches slips.
 */
import { pino } from "pino";
import type { Logger, DestinationStream } from "pino";

export type { Logger };

/** Log levels accepted by `LOG_LEVEL`. */
export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

/** A log level. */
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Builds the process logger; `destination` defaults to stdout (tests pass a stream to read lines back). */
export function createLogger(options: { level: LogLevel; destination?: DestinationStream }): Logger {
  return pino(
    {
      level: options.level,
      base: { service: "solgate" },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: {
        paths: ["authorization", "headers.authorization", "req.headers.authorization", "apiKey", "apiKeys", "*.apiKeys"],
        censor: "[redacted]",
      },
    },
    options.destination,
  );
}
