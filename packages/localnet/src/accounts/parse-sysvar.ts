/**
 * Sysvar accounts in agave's jsonParsed form (`parse_sysvar`, program "sysvar"), chosen by address
 * and decoded from their bincode layouts. Anything that does not decode is unparseable (base64).
 */
import { encodeBase58 } from "./base58.ts";
import { jsonI64, jsonU64, type JsonU64 } from "./json.ts";
import type { ParsedProgramData } from "./parse-program-data.ts";

/** Bounds-checked little-endian reads; any overrun throws and the sysvar is unparseable. */
class Reader {
  readonly #view: DataView;
  readonly #bytes: Uint8Array;
  offset = 0;

  constructor(bytes: Uint8Array) {
    this.#bytes = bytes;
    this.#view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  #take(length: number): number {
    const at = this.offset;
    if (at + length > this.#bytes.length) throw new RangeError("sysvar data too short");
    this.offset += length;
    return at;
  }

  u8(): number {
    return this.#bytes[this.#take(1)];
  }
  bool(): boolean {
    const value = this.u8();
    if (value > 1) throw new RangeError("not a bool");
    return value === 1;
  }
  u64(): bigint {
    return this.#view.getBigUint64(this.#take(8), true);
  }
  i64(): bigint {
    return this.#view.getBigInt64(this.#take(8), true);
  }
  f64(): number {
    return this.#view.getFloat64(this.#take(8), true);
  }
  u128(): bigint {
    const low = this.u64();
    return (this.u64() << 64n) | low;
  }
  hash(): string {
    const at = this.#take(32);
    return encodeBase58(this.#bytes.subarray(at, at + 32));
  }
  /** A bincode `Vec` length, refusing lengths the data cannot hold. */
  length(itemSize: number): number {
    const length = this.u64();
    if (length * BigInt(itemSize) > BigInt(this.#bytes.length - this.offset))
      throw new RangeError("vector overruns data");
    return Number(length);
  }
}

const u64 = (reader: Reader): JsonU64 => jsonU64(reader.u64());
const feeCalculator = (reader: Reader) => ({ lamportsPerSignature: reader.u64().toString() });

/** Slot history bitmap size (agave's `slot_history::MAX_ENTRIES`). */
const SLOT_HISTORY_ENTRIES = 1024 * 1024;

function slotHistory(reader: Reader): ParsedProgramData {
  if (reader.u8() !== 1) throw new RangeError("slot history without bits");
  const words = reader.length(8);
  const blocks = Array.from({ length: words }, () => reader.u64());
  const bitLength = reader.u64();
  const nextSlot = u64(reader);
  const chars = new Uint8Array(SLOT_HISTORY_ENTRIES).fill(0x30);
  for (let i = 0; i < SLOT_HISTORY_ENTRIES && BigInt(i) < bitLength; i++) {
    if ((blocks[i >>> 6] >> BigInt(i & 63)) & 1n) chars[i] = 0x31;
  }
  return { type: "slotHistory", info: { nextSlot, bits: Buffer.from(chars).toString("latin1") } };
}

const PARSERS: Record<string, (reader: Reader) => ParsedProgramData> = {
  SysvarC1ock11111111111111111111111111111111: (r) => {
    const slot = u64(r);
    const epochStartTimestamp = jsonI64(r.i64());
    const epoch = u64(r);
    const leaderScheduleEpoch = u64(r);
    return {
      type: "clock",
      info: { slot, epoch, epochStartTimestamp, leaderScheduleEpoch, unixTimestamp: jsonI64(r.i64()) },
    };
  },
  SysvarEpochSchedu1e111111111111111111111111: (r) => ({
    type: "epochSchedule",
    info: {
      slotsPerEpoch: u64(r),
      leaderScheduleSlotOffset: u64(r),
      warmup: r.bool(),
      firstNormalEpoch: u64(r),
      firstNormalSlot: u64(r),
    },
  }),
  SysvarFees111111111111111111111111111111111: (r) => ({ type: "fees", info: { feeCalculator: feeCalculator(r) } }),
  SysvarRecentB1ockHashes11111111111111111111: (r) => ({
    type: "recentBlockhashes",
    info: Array.from({ length: r.length(40) }, () => ({ blockhash: r.hash(), feeCalculator: feeCalculator(r) })),
  }),
  SysvarRent111111111111111111111111111111111: (r) => ({
    type: "rent",
    // agave 4.4 (SIMD-0194): only the per-byte rate; the former threshold and burn bytes are not shown.
    info: { lamportsPerByte: r.u64().toString() },
  }),
  SysvarRewards111111111111111111111111111111: (r) => ({ type: "rewards", info: { validatorPointValue: r.f64() } }),
  SysvarS1otHashes111111111111111111111111111: (r) => ({
    type: "slotHashes",
    info: Array.from({ length: r.length(40) }, () => ({ slot: u64(r), hash: r.hash() })),
  }),
  SysvarS1otHistory11111111111111111111111111: slotHistory,
  SysvarStakeHistory1111111111111111111111111: (r) => ({
    type: "stakeHistory",
    info: Array.from({ length: r.length(32) }, () => ({
      epoch: u64(r),
      stakeHistory: { effective: u64(r), activating: u64(r), deactivating: u64(r) },
    })),
  }),
  SysvarLastRestartS1ot1111111111111111111111: (r) => ({ type: "lastRestartSlot", info: { lastRestartSlot: u64(r) } }),
  SysvarEpochRewards1111111111111111111111111: (r) => ({
    type: "epochRewards",
    info: {
      distributionStartingBlockHeight: u64(r),
      numPartitions: u64(r),
      parentBlockhash: r.hash(),
      totalPoints: r.u128().toString(),
      totalRewards: r.u64().toString(),
      distributedRewards: r.u64().toString(),
      active: r.bool(),
    },
  }),
};

/** agave's `parse_sysvar`: the parsed sysvar at `address`, or null. */
export function parseSysvar(address: string, data: Uint8Array): ParsedProgramData | null {
  const parse = PARSERS[address];
  if (parse === undefined) return null;
  try {
    return parse(new Reader(data));
  } catch {
    return null;
  }
}
