/** A Borsh reader over instruction data: each read throws a `ProgramError` when the data runs out. */
import bs58 from "bs58";
import { ProgramError } from "./emulated-programs.ts";

export interface BorshReader {
  u8(): number;
  bool(): boolean;
  u16(): number;
  u32(): number;
  u64(): bigint;
  bytes(n: number): Uint8Array;
  pubkey(): string;
  string(): string;
  option<T>(read: () => T): T | null;
  vec<T>(read: () => T): T[];
  readonly offset: number;
  readonly remaining: number;
}

/** `code`: the program's error for data it cannot read. */
export function borshReader(data: Uint8Array, offset: number, code: number): BorshReader {
  let at = offset;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const need = (n: number) => {
    if (at + n > data.length) throw new ProgramError(code, "Failed to deserialize the instruction data");
  };
  const reader: BorshReader = {
    u8() {
      need(1);
      return data[at++]!;
    },
    bool() {
      const v = reader.u8();
      if (v > 1) throw new ProgramError(code, "Invalid bool in the instruction data");
      return v === 1;
    },
    u16() {
      need(2);
      const v = view.getUint16(at, true);
      at += 2;
      return v;
    },
    u32() {
      need(4);
      const v = view.getUint32(at, true);
      at += 4;
      return v;
    },
    u64() {
      need(8);
      const v = view.getBigUint64(at, true);
      at += 8;
      return v;
    },
    bytes(n) {
      need(n);
      const v = data.subarray(at, at + n);
      at += n;
      return v;
    },
    pubkey: () => bs58.encode(reader.bytes(32)),
    string() {
      const length = reader.u32();
      return new TextDecoder("utf-8", { fatal: false }).decode(reader.bytes(length));
    },
    option(read) {
      return reader.bool() ? read() : null;
    },
    vec(read) {
      const length = reader.u32();
      if (length > data.length) throw new ProgramError(code, "Invalid vector length in the instruction data");
      return Array.from({ length }, read);
    },
    get offset() {
      return at;
    },
    get remaining() {
      return data.length - at;
    },
  };
  return reader;
}
