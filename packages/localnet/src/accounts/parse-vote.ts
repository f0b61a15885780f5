/**
 * agave 4.4's `parse_vote` (account-decoder, program "vote"): `VoteStateV4::deserialize(data,
 * vote_pubkey)`, which reads the bincode `VoteStateVersions` v4 (tag 3, SIMD-0185), current v3
 * (tag 2, lockouts with latency) and 1.14.11 (tag 1, lockouts without) layouts and refuses 0.23.5
 * (tag 0) and any other tag. Older layouts are converted as SIMD-0185 says: commission x 100 as the
 * inflation-rewards basis points, the vote account collecting inflation rewards, the node collecting
 * block revenue at 10,000 bps, no pending rewards, no BLS key; their prior-voter buffer is skipped
 * unread. The answer's `commission` is the basis points rounded up to a percent (at most 255) and
 * `priorVoters` is always empty. Credits and pending rewards are strings; slots, epochs and counts
 * numbers; authorized voters sorted by epoch, a repeated epoch keeping its last voter (a BTreeMap).
 */
import { encodeBase58 } from "./base58.ts";
import { jsonI64, jsonU64 } from "./json.ts";
import type { ParsedProgramData } from "./parse-program-data.ts";

/** Bytes of v3's prior-voters buffer: 32 x (pubkey, epoch, epoch), the index u64 and the empty flag. */
const PRIOR_VOTERS_SIZE = 32 * 48 + 8 + 1;
const BLS_PUBLIC_KEY_COMPRESSED_SIZE = 48;

class Reader {
  readonly #dv: DataView;
  readonly #data: Uint8Array;
  at = 0;
  constructor(data: Uint8Array) {
    this.#data = data;
    this.#dv = new DataView(data.buffer, data.byteOffset, data.byteLength);
  }
  take(n: number): number {
    const at = this.at;
    if (at + n > this.#data.length) throw new RangeError("vote state too short");
    this.at += n;
    return at;
  }
  bytes(n: number): Uint8Array {
    const at = this.take(n);
    return this.#data.subarray(at, at + n);
  }
  u8 = () => this.#data[this.take(1)]!;
  u16 = () => this.#dv.getUint16(this.take(2), true);
  u32 = () => this.#dv.getUint32(this.take(4), true);
  u64 = () => this.#dv.getBigUint64(this.take(8), true);
  i64 = () => this.#dv.getBigInt64(this.take(8), true);
  key = () => encodeBase58(this.bytes(32));
  /** A bincode sequence length, refusing lengths the data cannot hold. */
  length(itemSize: number): number {
    const n = this.u64();
    if (n * BigInt(itemSize) > BigInt(this.#data.length - this.at)) throw new RangeError("sequence overruns data");
    return Number(n);
  }
  /** An `Option` tag: 0 or 1. */
  option(): boolean {
    const tag = this.u8();
    if (tag > 1) throw new RangeError("bad option tag");
    return tag === 1;
  }
}

function parse(data: Uint8Array, votePubkey: string): ParsedProgramData {
  const r = new Reader(data);
  const version = r.u32();
  if (version !== 1 && version !== 2 && version !== 3) throw new RangeError("unsupported vote state version");
  const nodePubkey = r.key();
  const authorizedWithdrawer = r.key();
  let inflationRewardsCollector: string;
  let blockRevenueCollector: string;
  let inflationRewardsCommissionBps: number;
  let blockRevenueCommissionBps: number;
  let pendingDelegatorRewards: bigint;
  let blsPubkeyCompressed: string | null;
  if (version === 3) {
    inflationRewardsCollector = r.key();
    blockRevenueCollector = r.key();
    inflationRewardsCommissionBps = r.u16();
    blockRevenueCommissionBps = r.u16();
    pendingDelegatorRewards = r.u64();
    blsPubkeyCompressed = r.option() ? encodeBase58(r.bytes(BLS_PUBLIC_KEY_COMPRESSED_SIZE)) : null;
  } else {
    inflationRewardsCommissionBps = r.u8() * 100;
    inflationRewardsCollector = votePubkey;
    blockRevenueCollector = nodePubkey;
    blockRevenueCommissionBps = 10_000;
    pendingDelegatorRewards = 0n;
    blsPubkeyCompressed = null;
  }
  const hasLatency = version !== 1;
  const votes = Array.from({ length: r.length(hasLatency ? 13 : 12) }, () => {
    const latency = hasLatency ? r.u8() : 0;
    const slot = jsonU64(r.u64());
    return { latency, slot, confirmationCount: r.u32() };
  });
  const rootSlot = r.option() ? jsonU64(r.u64()) : null;
  const voters = new Map<bigint, string>();
  for (let i = r.length(40); i > 0; i--) {
    const epoch = r.u64();
    voters.set(epoch, r.key());
  }
  const authorizedVoters = [...voters.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([epoch, authorizedVoter]) => ({ epoch: jsonU64(epoch), authorizedVoter }));
  if (version !== 3) r.take(PRIOR_VOTERS_SIZE);
  const epochCredits = Array.from({ length: r.length(24) }, () => ({
    epoch: jsonU64(r.u64()),
    credits: r.u64().toString(),
    previousCredits: r.u64().toString(),
  }));
  const lastTimestamp = { slot: jsonU64(r.u64()), timestamp: jsonI64(r.i64()) };
  const commission = Math.min(Math.ceil(inflationRewardsCommissionBps / 100), 255);
  return {
    type: "vote",
    info: {
      nodePubkey,
      authorizedWithdrawer,
      commission,
      votes,
      rootSlot,
      authorizedVoters,
      priorVoters: [],
      epochCredits,
      lastTimestamp,
      inflationRewardsCommissionBps,
      inflationRewardsCollector,
      blockRevenueCollector,
      blockRevenueCommissionBps,
      pendingDelegatorRewards: pendingDelegatorRewards.toString(),
      blsPubkeyCompressed,
    },
  };
}

/**
 * The parsed vote account at `votePubkey` (older layouts name it their inflation-rewards collector),
 * or null when agave could not deserialize it.
 */
export function parseVote(data: Uint8Array, votePubkey: string | undefined): ParsedProgramData | null {
  if (votePubkey === undefined) return null;
  try {
    return parse(data, votePubkey);
  } catch {
    return null;
  }
}
