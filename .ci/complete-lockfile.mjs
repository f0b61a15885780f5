// Adds to package-lock.json the entries of other platforms' optional native packages (litesvm-darwin-*,
// @bufbuild/buf-win32-*, ...). The registry this project is built against serves only this platform's,
// so `npm install` leaves them out of the lock, and `npm ci` then refuses the lock as out of sync.
// An entry with `os`/`cpu` that do not match is skipped by `npm ci`, so no tarball is ever needed.
// Run after any `npm install`:  node .ci/complete-lockfile.mjs
import { readFileSync, writeFileSync } from "node:fs";

const path = new URL("../package-lock.json", import.meta.url);
const lock = JSON.parse(readFileSync(path, "utf8"));
const platform =
  /(darwin|linux|win32|freebsd|android|openbsd|sunos|aix|netbsd)-(x64|arm64|armv7|arm|ia32|ppc64|s390x|riscv64|loong64)(?:-(gnu|musl|msvc|gnueabihf))?$/;
const added = [];
for (const [key, meta] of Object.entries(lock.packages)) {
  for (const [dep, version] of Object.entries(meta.optionalDependencies ?? {})) {
    if (lock.packages[`node_modules/${dep}`] || lock.packages[`${key}/node_modules/${dep}`]) continue;
    const match = platform.exec(dep.split("/").at(-1));
    if (!match) continue;
    const [, os, cpu, libc] = match;
    lock.packages[`node_modules/${dep}`] = {
      version,
      cpu: [cpu === "armv7" ? "arm" : cpu],
      ...(meta.dev ? { dev: true } : {}),
      ...(libc === "gnu" || libc === "musl" ? { libc: [libc === "gnu" ? "glibc" : "musl"] } : {}),
      license: meta.license ?? "UNKNOWN",
      optional: true,
      os: [os],
    };
    added.push(dep);
  }
}
const [root, ...rest] = Object.entries(lock.packages);
lock.packages = Object.fromEntries([root, ...rest.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))]);
writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`);
console.log(added.length === 0 ? "package-lock.json is complete" : `added ${added.length}: ${added.join(", ")}`);
