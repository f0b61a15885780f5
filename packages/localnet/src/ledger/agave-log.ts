/**
 * The lines agave writes to validator.log at start that tools and test suites grep, in agave's words
 * and log targets: solana-test-validator's version line (crate_name!() is agave-validator), the
 * validator's `identity pubkey`, `genesis hash`, `shred version`, its contact info (`{:?}` of gossip's
 * ContactInfo, carrying `shred_version`), `local gossip address`, and solana-rpc's `rpc bound to`.
 */
import type { NodeSocketRole } from "../cluster/node-sockets.ts";

export interface AgaveStart {
  version: string;
  featureSet: number;
  identity: string;
  genesisHash: string;
  shredVersion: number;
  /** `host:port` of the RPC and PubSub servers. */
  rpc: string;
  pubsub: string;
  sockets: Readonly<Record<NodeSocketRole, string>>;
}

/** gossip's SOCKET_TAG_* of the sockets the localnet names. */
const TAGS: Record<NodeSocketRole | "rpc" | "pubsub", number> = {
  gossip: 0,
  rpc: 2,
  pubsub: 3,
  serveRepair: 4,
  tpuForwardsQuic: 7,
  tpuQuic: 8,
  tpuVote: 9,
  tvu: 10,
};
/** SOCKET_TAG_ALPENGLOW + 1. */
const SOCKET_CACHE_SIZE = 14;

const portOf = (address: string) => Number(address.slice(address.lastIndexOf(":") + 1));
const hostOf = (address: string) => address.slice(0, address.lastIndexOf(":"));

/** `ContactInfo { .. }` as Rust's derived Debug writes it. */
function contactInfo(start: AgaveStart, now: number): string {
  const [major, minor, patch] = start.version.split(".").map(Number);
  const named = { ...start.sockets, rpc: start.rpc, pubsub: start.pubsub };
  const host = hostOf(start.rpc);
  // Sockets sorted by port, each port an offset from the previous one (ContactInfo::set_socket).
  const entries = (Object.keys(TAGS) as (keyof typeof TAGS)[])
    .map((role) => ({ key: TAGS[role], port: portOf(named[role]) }))
    .sort((a, b) => a.port - b.port || a.key - b.key);
  let previous = 0;
  const sockets = entries.map(({ key, port }) => {
    const offset = port - previous;
    previous = port;
    return `SocketEntry { key: ${key}, index: 0, offset: ${offset} }`;
  });
  const cache = Array.from({ length: SOCKET_CACHE_SIZE }, (_, tag) => {
    const role = (Object.keys(TAGS) as (keyof typeof TAGS)[]).find((r) => TAGS[r] === tag);
    return role === undefined ? "0.0.0.0:0" : named[role];
  });
  return (
    `ContactInfo { pubkey: ${start.identity}, wallclock: ${now}, outset: ${now * 1000}, ` +
    `shred_version: ${start.shredVersion}, version: Version { major: ${major}, minor: ${minor}, patch: ${patch}, ` +
    `commit: 0, feature_set: ${start.featureSet}, client: 3 }, addrs: [${host}], sockets: [${sockets.join(", ")}], ` +
    `extensions: [], cache: [${cache.join(", ")}] }`
  );
}

/** The lines, each with the log target agave writes it under. */
export function agaveStartLines(start: AgaveStart, now = Date.now()): { target: string; text: string }[] {
  // solana-version's as_detailed_string: no source commit (0), the feature set as 8 hex digits.
  const feat = start.featureSet.toString(16).padStart(8, "0");
  return [
    {
      target: "solana_test_validator",
      text: `agave-validator ${start.version} (src:00000000; feat:${feat}, client:Agave)`,
    },
    { target: "solana_core::validator", text: `identity pubkey: ${start.identity}` },
    { target: "solana_core::validator", text: `genesis hash: ${start.genesisHash}` },
    {
      target: "solana_core::validator",
      text: `shred version: ${start.shredVersion}, hard forks: HardForks { hard_forks: [] }`,
    },
    { target: "solana_core::validator", text: contactInfo(start, now) },
    { target: "solana_core::validator", text: `local gossip address: ${start.sockets.gossip}` },
    { target: "solana_rpc::rpc_service", text: `rpc bound to ${start.rpc}` },
  ];
}
