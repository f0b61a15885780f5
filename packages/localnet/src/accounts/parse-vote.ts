/**
 * agave's `parse_vote` (account-decoder, program "vote"): `VoteStateV3::deserialize`, which reads
 * the bincode `VoteStateVersions` current (tag 2, lockouts with latency), 1.14.11 (tag 1, lockouts
 * without) and 0.23.5 (tag 0: one authorized voter with its epoch, a prior-voter buffer of four-field
 * entries that the conversion drops) layouts. Credits are strings; slots, epochs and counts numbers; prior voters
 * listed only where set (the circular buffer's default entries skipped).
 */
import { encodeBase58 } from "./base58.ts";
import { jsonI64, jsonU64 } from "./json.ts";
import type { ParsedProgramData } from "./parse-program-data.ts";

const PRIOR_VOTERS = 32;
const DEFAULT_KEY = "11111111111111111111111111111111";

class Reader {
  readonly #dv: DataView;
  readonly #data: Uint8Array;
  at = 0;
  constructor(data: Uint8Array) {
    this.#data = data;
    this.#dv = new DataView(data.buffer, data.byteOffset, data.byteLength);
  }
  #take(n: number): number {
    const at = this.at;
    if (at + n > this.#data.length) throw new RangeError("vote state too short");
    this.at += n;
    return at;
  }
  u8 = () => this.#data[this.#take(1)]!;
  u32 = () => this.#dv.getUint32(this.#take(4), true);
  u64 = () => this.#dv.getBigUint64(this.#take(8), true);
  i64 = () => this.#dv.getBigInt64(this.#take(8), true);
  key = () => {
    const at = this.#take(32);
    return encodeBase58(this.#data.subarray(at, at + 32));
  };
  /** A bincode sequence length, refusing lengths the data cannot hold. */
  length(itemSize: number): number {
    const n = this.u64();
    if (n * BigInt(itemSize) > BigInt(this.#data.length - this.at)) throw new RangeError("sequence overruns data");
    return Number(n);
  }
}

/** Tag 0, converted to the current state as `convert_to_v3` does. */
function parseV0_23_5(r: Reader): ParsedProgramData {
  const nodePubkey = r.key();
  const authorizedVoter = r.key();
  const authorizedVoterEpoch = jsonU64(r.u64());
  for (let i = 0; i < PRIOR_VOTERS; i++) {
    r.key();
    r.u64();
    r.u64();
    r.u64();
  }
  r.u64(); // circular buffer index
  if (r.u8() > 1) throw new RangeError("bad bool");
  const authorizedWithdrawer = r.key();
  const commission = r.u8();
  const votes = Array.from({ length: r.length(12) }, () => {
    const slot = jsonU64(r.u64());
    return { slot, confirmationCount: r.u32() };
  });
  return {
    type: "vote",
    info: {
      nodePubkey,
      authorizedWithdrawer,
      commission,
      votes,
      ...rest(r),
      authorizedVoters: [{ epoch: authorizedVoterEpoch, authorizedVoter }],
      priorVoters: [],
    },
  };
}

/** Root slot, epoch credits and last timestamp: the tail every version shares. */
function rest(r: Reader, between?: () => { authorizedVoters: unknown[]; priorVoters: unknown[] }) {
  const hasRoot = r.u8();
  if (hasRoot > 1) throw new RangeError("bad option tag");
  const rootSlot = hasRoot === 1 ? jsonU64(r.u64()) : null;
  const middle = between?.();
  const epochCredits = Array.from({ length: r.length(24) }, () => ({
    epoch: jsonU64(r.u64()),
    credits: r.u64().toString(),
    previousCredits: r.u64().toString(),
  }));
  const lastTimestamp = { slot: jsonU64(r.u64()), timestamp: jsonI64(r.i64()) };
  return { rootSlot, ...middle, epochCredits, lastTimestamp };
}

function parse(data: Uint8Array): ParsedProgramData {
  const r = new Reader(data);
  const version = r.u32();
  if (version === 0) return parseV0_23_5(r);
  if (version !== 1 && version !== 2) throw new RangeError("unsupported vote state version");
  const nodePubkey = r.key();
  const authorizedWithdrawer = r.key();
  const commission = r.u8();
  const votes = Array.from({ length: r.length(version === 2 ? 13 : 12) }, () => {
    if (version === 2) r.u8(); // latency
    const slot = jsonU64(r.u64());
    return { slot, confirmationCount: r.u32() };
  });
  const tail = rest(r, () => {
    const authorizedVoters = Array.from({ length: r.length(40) }, () => {
      const epoch = jsonU64(r.u64());
      return { epoch, authorizedVoter: r.key() };
    });
    const priorVoters: unknown[] = [];
    for (let i = 0; i < PRIOR_VOTERS; i++) {
      const authorizedPubkey = r.key();
      const epochOfLastAuthorizedSwitch = jsonU64(r.u64());
      const targetEpoch = jsonU64(r.u64());
      if (authorizedPubkey !== DEFAULT_KEY)
        priorVoters.push({ authorizedPubkey, epochOfLastAuthorizedSwitch, targetEpoch });
    }
    r.u64(); // circular buffer index
    if (r.u8() > 1) throw new RangeError("bad bool");
    return { authorizedVoters, priorVoters };
  });
  return { type: "vote", info: { nodePubkey, authorizedWithdrawer, commission, votes, ...tail } };
}

/** The parsed vote account, or null when agave could not deserialize it. */
export function parseVote(data: Uint8Array): ParsedProgramData | null {
  try {
    return parse(data);
  } catch {
    return null;
  }
}
