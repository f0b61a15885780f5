/**
 * Structured JSON logs (pino), one line per event. Authorization headers and API keys never reach
 * a log line: request logging takes named fields only, and the redaction below catches slips.
 */
import { pino } from "pino";
import type { Logger, DestinationStream } from "pino";
import sonicBoom from "sonic-boom";
import type { SonicBoomOpts } from "sonic-boom";

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
        paths: [
          "authorization",
          "headers.authorization",
          "req.headers.authorization",
          "apiKey",
          "apiKeys",
          "*.apiKeys",
        ],
        censor: "[redacted]",
      },
    },
    options.destination ?? (options.level === "silent" ? { write: () => {} } : createStdoutDestination()),
  );
}

/** How long (in 100 ms retries) a reader may take no log bytes at all before logging stops. */
const STALLED_READER_RETRIES = 50;

/** Where log lines go: stdout, written out by {@link createStdoutDestination}. */
export interface LogDestination extends DestinationStream {
  /** Writes out what is buffered; `cb` runs once it is, or once logging has stopped. */
  flush(cb: () => void): void;
}

/**
 * Log lines to stdout (sonic-boom 5), written asynchronously so that a slow reader never stalls a
 * request, and flushed synchronously at exit. pino's own destination (sonic-boom 4) retries a broken
 * pipe forever in that exit flush, so a gateway whose log reader had gone could never exit. Here a
 * reader that has gone (EPIPE), or has taken nothing for 5 s, stops logging, with one line on stderr.
 */
export function createStdoutDestination(fd = 1): LogDestination {
  // maxWriteRetries bounds the 100 ms retries of a full pipe (sonic-boom 5; not in its typings).
  const boom = new sonicBoom.SonicBoom({ fd, sync: false, maxWriteRetries: STALLED_READER_RETRIES } as SonicBoomOpts);
  let stopped = false;
  boom.on("error", (err: NodeJS.ErrnoException) => {
    if (stopped) return;
    stopped = true;
    process.stderr.write(`solgate: logging stopped: stdout failed (${err.code ?? err.message})\n`);
  });
  process.once("exit", () => {
    if (stopped) return;
    try {
      boom.flushSync();
    } catch {
      // The reader went away during exit: nothing more can be done for these lines.
    }
  });
  return {
    write: (line: string) => (stopped ? true : boom.write(line)),
    flush: (cb) => (stopped ? cb() : boom.flush(() => cb())),
  };
}
