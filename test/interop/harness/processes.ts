/**
 * Runs the interop clients and build scripts as child processes and reads their reports.
 * A client prints `ok NAME` or `FAIL NAME: why` per check and ends with `N passed, N failed`.
 */
import { spawn } from "node:child_process";

/** What a finished process did. */
export interface ProcessResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Options of `run`. */
export interface RunOptions {
  cwd?: string;
  env?: Record<string, string | undefined>;
  /** Killed (SIGKILL to its process group) after this; default 10 minutes. */
  timeoutMs?: number;
  /** Echo output as it comes (builds are long; a person watching wants to see them move). */
  echo?: boolean;
}

/** Runs `command args`, collecting output; never rejects on a non-zero exit. */
export function run(command: string, args: readonly string[], options: RunOptions = {}): Promise<ProcessResult> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ["ignore", "pipe", "pipe"],
      // Own process group, so a timeout ends the whole tree (cargo and go spawn compilers).
      detached: true,
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d;
      if (options.echo) process.stdout.write(d);
    });
    child.stderr.on("data", (d: Buffer) => {
      stderr += d;
      if (options.echo) process.stderr.write(d);
    });
    const timer = setTimeout(() => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {}
    }, options.timeoutMs ?? 600_000);
    child.on("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, ms: Math.round(performance.now() - started) });
    });
  });
}

/** One check a client reported. */
export interface CheckResult {
  name: string;
  ok: boolean;
  message?: string;
}

/** A client's report: its checks and its closing tally. */
export interface ClientReport {
  checks: CheckResult[];
  passed: number;
  failed: number;
  /** Whether the closing `N passed, N failed` line was printed and agrees with the checks. */
  complete: boolean;
}

/** Parses a client's stdout. */
export function parseReport(stdout: string): ClientReport {
  const checks: CheckResult[] = [];
  let tally: { passed: number; failed: number } | undefined;
  for (const line of stdout.split("\n")) {
    const ok = /^ok (.+)$/.exec(line);
    const fail = /^FAIL (.+?): (.*)$/.exec(line);
    const end = /^(\d+) passed, (\d+) failed$/.exec(line.trim());
    if (ok) checks.push({ name: ok[1], ok: true });
    else if (fail) checks.push({ name: fail[1], ok: false, message: fail[2] });
    else if (end) tally = { passed: Number(end[1]), failed: Number(end[2]) };
  }
  const passed = checks.filter((c) => c.ok).length;
  const failed = checks.length - passed;
  const complete = tally !== undefined && tally.passed === passed && tally.failed === failed;
  return { checks, passed, failed, complete };
}

/** A one-line summary of the failures, for an assertion message. */
export function describeFailures(report: ClientReport, result: ProcessResult): string {
  const failures = report.checks.filter((c) => !c.ok).map((c) => `  ${c.name}: ${c.message}`);
  const tail = result.stderr.split("\n").slice(-15).join("\n");
  return [`exit ${result.code}${result.signal ? ` (${result.signal})` : ""}`, ...failures, tail].join("\n");
}
