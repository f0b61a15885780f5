/**
 * Real Redis topologies for tests, of `redis-server` processes on free loopback ports: a Redis Cluster of
 * 3 masters and 3 replicas (created by `redis-cli --cluster create`), and a Sentinel group of 1 master,
 * 1 replica and 3 sentinels. Each can lose its master (SIGKILL) or fail over on request, as an operator's would.
 */
import { execFile, spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { RedisTopology } from "../../src/store/redis.ts";
import { freePort } from "./redis-server.ts";

const run = promisify(execFile);

/** A running topology of a test. */
export interface RedisTopologyServer {
  readonly topology: RedisTopology;
  /** The `SOLGATE_REDIS_*` variables that name it, for gateway processes. */
  readonly env: Record<string, string>;
  /**
   * SIGKILLs the master of the chain's keys (cluster: the master of `key`'s slot); resolves once a replica took
   * over and the killed node is back as a replica (restarted on its port and data, as an orchestrator would).
   */
  killMaster(key?: string): Promise<void>;
  /** A clean, operator-requested failover (`CLUSTER FAILOVER` on the replica, `SENTINEL FAILOVER`); resolves when done. */
  failover(key?: string): Promise<void>;
  /**
   * Sentinel only: SIGKILLs the replica (or a sentinel) and starts it again once `downMs` passed; resolves when
   * it is back (the replica in sync with the master).
   */
  killReplica?(downMs: number): Promise<void>;
  killSentinel?(downMs: number): Promise<void>;
  /** Deletes every key on every master. */
  flush(): Promise<void>;
  stop(): Promise<void>;
}

interface Process {
  port: number;
  child: ChildProcess;
  /** How it was started, to start it again on the same port and data. */
  args: string[];
}

async function restart(p: Process): Promise<void> {
  p.child = await spawnRedis(p.args);
}

async function cli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run("redis-cli", ["-p", String(port), ...args], { timeout: 10_000 });
  return stdout.trim();
}

async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`redis topology: ${what} did not happen in time`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Starts `redis-server` (or `--sentinel`) with `args`; resolves once it accepts connections. */
async function spawnRedis(args: string[], ready = "Ready to accept connections"): Promise<ChildProcess> {
  const child = spawn("redis-server", args, { stdio: ["ignore", "pipe", "pipe"] });
  await new Promise<void>((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`redis-server did not start:\n${out}`)), 15_000);
    const onData = (chunk: Buffer) => {
      out = (out + chunk.toString()).slice(-16_384);
      if (out.includes(ready)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("error", reject);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited (${code}):\n${out}`));
    });
  });
  return child;
}

async function kill(child: ChildProcess, signal: NodeJS.Signals = "SIGKILL"): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill(signal);
  await exited;
}

const COMMON = ["--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--protected-mode", "no"];

/** A Redis Cluster: 3 masters, 3 replicas, node timeout 1 s (so a killed master is replaced within ~2-3 s). */
export async function startRedisCluster(): Promise<RedisTopologyServer> {
  const root = mkdtempSync(join(tmpdir(), "solgate-cluster-"));
  const nodes: Process[] = [];
  for (let i = 0; i < 6; i++) {
    const port = await freePort();
    const dir = join(root, String(port));
    mkdirSync(dir);
    const args = [
      "--port",
      String(port),
      "--dir",
      dir,
      ...COMMON,
      "--cluster-enabled",
      "yes",
      "--cluster-config-file",
      "nodes.conf",
      "--cluster-node-timeout",
      "1000",
    ];
    nodes.push({ port, child: await spawnRedis(args), args });
  }
  await run(
    "redis-cli",
    ["--cluster", "create", ...nodes.map((n) => `127.0.0.1:${n.port}`), "--cluster-replicas", "1", "--cluster-yes"],
    { timeout: 60_000 },
  );
  const alive = () => nodes.filter((n) => n.child.exitCode === null && n.child.signalCode === null);
  const clusterOk = async () => {
    for (const n of alive()) if (!(await cli(n.port, "cluster", "info")).includes("cluster_state:ok")) return undefined;
    return true;
  };
  await until("the cluster's state ok", clusterOk);
  // A healthy cluster: every replica in sync with its master.
  await until("the replicas' sync", async () => {
    for (const n of alive()) {
      const info = await cli(n.port, "info", "replication");
      if (info.includes("role:slave") && !info.includes("master_link_status:up")) return undefined;
    }
    return true;
  });

  /** The node that serves `key`'s slot as master now, and one of its replicas. */
  async function shardOf(key: string): Promise<{ master: Process; replica: Process }> {
    const port = alive()[0].port;
    const slot = Number(await cli(port, "cluster", "keyslot", key));
    const lines = (await cli(port, "cluster", "nodes")).split("\n").map((l) => l.split(" "));
    const masterLine = lines.find(
      (l) =>
        l[2].includes("master") &&
        !l[2].includes("fail") &&
        l.slice(8).some((r) => {
          const [a, b] = r.split("-").map(Number);
          return slot >= a && slot <= (b ?? a);
        }),
    );
    if (masterLine === undefined) throw new Error(`no master serves slot ${slot}`);
    const replicaLine = lines.find((l) => l[3] === masterLine[0] && !l[2].includes("fail"));
    const byAddress = (l: string[]) => nodes.find((n) => l[1].startsWith(`127.0.0.1:${n.port}@`))!;
    if (replicaLine === undefined) throw new Error(`master of slot ${slot} has no live replica`);
    return { master: byAddress(masterLine), replica: byAddress(replicaLine) };
  }

  const entry = nodes.map((n) => `redis://127.0.0.1:${n.port}`);
  return {
    topology: { kind: "cluster", nodes: entry },
    env: { SOLGATE_REDIS_CLUSTER_NODES: entry.join(",") },
    async killMaster(key = "solgate:{localnet}:active") {
      const { master, replica } = await shardOf(key);
      await kill(master.child);
      await until("a replica's promotion", async () =>
        (await cli(replica.port, "role")).startsWith("master") ? true : undefined,
      );
      await until("the cluster's state ok", clusterOk);
      await restart(master);
      await until("the old master's return as a replica", async () =>
        (await cli(master.port, "role")).startsWith("slave") ? true : undefined,
      );
    },
    async failover(key = "solgate:{localnet}:active") {
      const { replica } = await shardOf(key);
      await cli(replica.port, "cluster", "failover");
      await until("the manual failover", async () =>
        (await cli(replica.port, "role")).startsWith("master") ? true : undefined,
      );
    },
    async flush() {
      for (const n of alive()) if ((await cli(n.port, "role")).startsWith("master")) await cli(n.port, "flushall");
    },
    async stop() {
      await Promise.all(nodes.map((n) => kill(n.child)));
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** The name the test sentinels monitor. */
export const SENTINEL_NAME = "solgate";

/** 1 master, 1 replica, 3 sentinels (quorum 2, down after 1 s): a killed master is replaced within ~3-5 s. */
export async function startRedisSentinel(): Promise<RedisTopologyServer> {
  const root = mkdtempSync(join(tmpdir(), "solgate-sentinel-"));
  const data: Process[] = [];
  for (let i = 0; i < 2; i++) {
    const port = await freePort();
    const dir = join(root, String(port));
    mkdirSync(dir);
    const replicaOf = i === 0 ? [] : ["--replicaof", "127.0.0.1", String(data[0].port)];
    const args = ["--port", String(port), "--dir", dir, ...COMMON, ...replicaOf];
    data.push({ port, child: await spawnRedis(args), args });
  }
  await until("the replica's sync", async () =>
    (await cli(data[1].port, "info", "replication")).includes("master_link_status:up") ? true : undefined,
  );
  const sentinels: Process[] = [];
  for (let i = 0; i < 3; i++) {
    const port = await freePort();
    const file = join(root, `sentinel-${port}.conf`);
    writeFileSync(
      file,
      [
        `port ${port}`,
        "bind 127.0.0.1",
        `dir ${root}`,
        `sentinel monitor ${SENTINEL_NAME} 127.0.0.1 ${data[0].port} 2`,
        `sentinel down-after-milliseconds ${SENTINEL_NAME} 1000`,
        `sentinel failover-timeout ${SENTINEL_NAME} 5000`,
        `sentinel parallel-syncs ${SENTINEL_NAME} 1`,
        "",
      ].join("\n"),
    );
    const args = [file, "--sentinel"];
    sentinels.push({ port, child: await spawnRedis(args, "Sentinel ID is"), args });
  }
  const masterPortOf = async (sentinel: Process) =>
    Number((await cli(sentinel.port, "sentinel", "get-master-addr-by-name", SENTINEL_NAME)).split("\n")[1]);
  const masterPort = () => masterPortOf(sentinels[0]);
  // Every sentinel knows the replica and the other sentinels before a test may fail anything over.
  await until("the sentinels' discovery", async () => {
    for (const s of sentinels) {
      const info = await cli(s.port, "sentinel", "master", SENTINEL_NAME);
      const fields = info.split("\n");
      const field = (name: string) => Number(fields[fields.indexOf(name) + 1]);
      if (field("num-slaves") < 1 || field("num-other-sentinels") < 2) return undefined;
    }
    return true;
  });

  /**
   * Resolves once every sentinel names a new master, and it took the role. Waiting for one sentinel is not enough:
   * a sentinel that has not yet heard of the failover still takes the old master for the master, and if the old
   * master returns (empty) before it hears, it makes the new master a replica of the old one (seen in CI).
   */
  async function promoted(from: number): Promise<number> {
    const to = await until("Sentinel's failover, agreed by every sentinel", async () => {
      const ports = await Promise.all(sentinels.map(masterPortOf));
      return ports[0] !== from && ports.every((p) => p === ports[0]) ? ports[0] : undefined;
    });
    await until("the new master's role", async () => ((await cli(to, "role")).startsWith("master") ? true : undefined));
    return to;
  }

  const list = sentinels.map((s) => `127.0.0.1:${s.port}`);
  return {
    topology: {
      kind: "sentinel",
      sentinels: sentinels.map((s) => ({ host: "127.0.0.1", port: s.port })),
      name: SENTINEL_NAME,
    },
    env: { SOLGATE_REDIS_SENTINELS: list.join(","), SOLGATE_REDIS_SENTINEL_NAME: SENTINEL_NAME },
    async killMaster() {
      const port = await masterPort();
      const master = data.find((d) => d.port === port)!;
      await kill(master.child);
      const to = await promoted(port);
      // Restarted as it was configured (a master); the sentinels make it a replica of the new one.
      await restart(master);
      const linked = async () =>
        (await cli(master.port, "info", "replication")).includes("master_link_status:up") ? true : undefined;
      // The sentinels convert it after their info period (10-20 s here). The test is about the gateway, not
      // Sentinel's timing: past 20 s, do what the sentinels would (REPLICAOF the new master).
      await until("the old master's return as a replica", linked, 20_000).catch(async () => {
        await cli(master.port, "replicaof", "127.0.0.1", String(to));
        await until("the old master's return as a replica (told REPLICAOF)", linked);
      });
    },
    async killReplica(downMs) {
      const port = await masterPort();
      const replica = data.find((d) => d.port !== port)!;
      await kill(replica.child);
      await new Promise((r) => setTimeout(r, downMs));
      // Started as first configured; the sentinels point it at the current master.
      await restart(replica);
      await until("the replica's return", async () =>
        (await cli(replica.port, "info", "replication")).includes("master_link_status:up") ? true : undefined,
      );
    },
    async killSentinel(downMs) {
      const sentinel = sentinels[2];
      await kill(sentinel.child);
      await new Promise((r) => setTimeout(r, downMs));
      sentinel.child = await spawnRedis(sentinel.args, "Sentinel ID is");
    },
    async failover() {
      const port = await masterPort();
      // Refused (NOGOODSLAVE, INPROG) while the sentinels have yet to see the replica healthy, or a failover of
      // their own runs: ask again until one starts.
      await until("Sentinel's acceptance of the failover", async () => {
        const answer = await cli(sentinels[0].port, "sentinel", "failover", SENTINEL_NAME);
        return answer === "OK" ? true : undefined;
      });
      await promoted(port);
    },
    async flush() {
      await cli(await masterPort(), "flushall");
    },
    async stop() {
      await Promise.all([...sentinels, ...data].map((p) => kill(p.child)));
      rmSync(root, { recursive: true, force: true });
    },
  };
}
