/**
 * jsonParsed for non-token programs, as agave's account-decoder renders them: system nonce accounts
 * ("nonce"), upgradeable-loader accounts ("bpf-upgradeable-loader"), address lookup tables
 * ("address-lookup-table"), sysvars ("sysvar"), stake, vote and config (stake config, validator info)
 * accounts.
 */
import { encodeBase58 } from "./base58.ts";
import { jsonU64 } from "./json.ts";
import { parseConfig } from "./parse-config.ts";
import { parseStake } from "./parse-stake.ts";
import { parseSysvar } from "./parse-sysvar.ts";
import { parseVote } from "./parse-vote.ts";
import {
  ADDRESS_LOOKUP_TABLE_PROGRAM,
  BPF_LOADER_UPGRADEABLE,
  CONFIG_PROGRAM,
  STAKE_PROGRAM,
  SYSTEM_PROGRAM,
  SYSVAR_OWNER,
  VOTE_PROGRAM,
} from "./program-ids.ts";

/** `{type, info?}` as it sits under `data.parsed`. */
export interface ParsedProgramData {
  readonly type: string;
  readonly info?: unknown;
}

/** A parser and the kebab-case program name agave reports for it. */
interface ProgramParser {
  readonly program: string;
  readonly parse: (data: Uint8Array, address: string | undefined) => ParsedProgramData | null;
}

function view(data: Uint8Array): DataView {
  return new DataView(data.buffer, data.byteOffset, data.byteLength);
}

/** bincode `Option<Pubkey>` at an offset: [value or null, bytes consumed], or undefined if malformed. */
function bincodeOptionKey(data: Uint8Array, offset: number): [string | null, number] | undefined {
  if (data.length < offset + 1) return undefined;
  if (data[offset] === 0) return [null, 1];
  if (data[offset] !== 1 || data.length < offset + 33) return undefined;
  return [encodeBase58(data.subarray(offset + 1, offset + 33)), 33];
}

/**
 * agave's `parse_nonce`: bincode `Versions` (u32) around `State` (u32); only initialized nonces
 * parse (an all-zero system account must not read as an "uninitialized nonce").
 */
function parseNonce(data: Uint8Array): ParsedProgramData | null {
  if (data.length < 80) return null;
  const dv = view(data);
  const version = dv.getUint32(0, true);
  const state = dv.getUint32(4, true);
  if (version > 1 || state !== 1) return null;
  return {
    type: "initialized",
    info: {
      authority: encodeBase58(data.subarray(8, 40)),
      blockhash: encodeBase58(data.subarray(40, 72)),
      feeCalculator: { lamportsPerSignature: dv.getBigUint64(72, true).toString() },
    },
  };
}

/** agave's `parse_bpf_upgradeable_loader` (bincode `UpgradeableLoaderState`). */
function parseUpgradeableLoader(data: Uint8Array): ParsedProgramData | null {
  if (data.length < 4) return null;
  const dv = view(data);
  switch (dv.getUint32(0, true)) {
    case 0:
      return { type: "uninitialized" };
    case 1: {
      const authority = bincodeOptionKey(data, 4);
      if (authority === undefined) return null;
      const rest = data.subarray(4 + authority[1]);
      return {
        type: "buffer",
        info: { authority: authority[0], data: [Buffer.from(rest).toString("base64"), "base64"] },
      };
    }
    case 2:
      if (data.length < 36) return null;
      return { type: "program", info: { programData: encodeBase58(data.subarray(4, 36)) } };
    case 3: {
      if (data.length < 12) return null;
      const authority = bincodeOptionKey(data, 12);
      if (authority === undefined) return null;
      // As agave: the data starts right after the bincode authority, at 45 with one and at 13
      // without (the unused authority bytes included), not at the loader's fixed 45 (decoder oracle).
      const rest = data.subarray(12 + authority[1]);
      return {
        type: "programData",
        info: {
          slot: jsonU64(dv.getBigUint64(4, true)),
          authority: authority[0],
          data: [Buffer.from(rest).toString("base64"), "base64"],
        },
      };
    }
    default:
      return null;
  }
}

/** Size of an address lookup table's metadata; addresses follow it. */
const LOOKUP_TABLE_META_SIZE = 56;

/** agave's `parse_address_lookup_table`. */
function parseLookupTable(data: Uint8Array): ParsedProgramData | null {
  if (data.length < 4) return null;
  const dv = view(data);
  const tag = dv.getUint32(0, true);
  if (tag === 0) return { type: "uninitialized" };
  if (tag !== 1 || data.length < 22) return null;
  const authority = bincodeOptionKey(data, 21);
  if (authority === undefined || data.length < 21 + authority[1] + 2) return null;
  if (data.length < LOOKUP_TABLE_META_SIZE || (data.length - LOOKUP_TABLE_META_SIZE) % 32 !== 0) return null;
  const addresses: string[] = [];
  for (let at = LOOKUP_TABLE_META_SIZE; at < data.length; at += 32)
    addresses.push(encodeBase58(data.subarray(at, at + 32)));
  const info: Record<string, unknown> = {
    deactivationSlot: dv.getBigUint64(4, true).toString(),
    lastExtendedSlot: dv.getBigUint64(12, true).toString(),
    lastExtendedSlotStartIndex: data[20],
  };
  if (authority[0] !== null) info.authority = authority[0];
  info.addresses = addresses;
  return { type: "lookupTable", info };
}

const PARSERS: ReadonlyMap<string, ProgramParser> = new Map<string, ProgramParser>([
  [SYSTEM_PROGRAM, { program: "nonce", parse: parseNonce }],
  [BPF_LOADER_UPGRADEABLE, { program: "bpf-upgradeable-loader", parse: parseUpgradeableLoader }],
  [ADDRESS_LOOKUP_TABLE_PROGRAM, { program: "address-lookup-table", parse: parseLookupTable }],
  [
    SYSVAR_OWNER,
    { program: "sysvar", parse: (data, address) => (address === undefined ? null : parseSysvar(address, data)) },
  ],
  [STAKE_PROGRAM, { program: "stake", parse: parseStake }],
  [VOTE_PROGRAM, { program: "vote", parse: parseVote }],
  [CONFIG_PROGRAM, { program: "config", parse: parseConfig }],
]);

/**
 * Parses data of a non-token program: `{program, parsed}`, or null (the caller falls back to
 * base64). Sysvars are told apart by their address, so they need it.
 */
export function parseProgramData(
  owner: string,
  data: Uint8Array,
  address?: string,
): { program: string; parsed: ParsedProgramData } | null {
  const parser = PARSERS.get(owner);
  if (parser === undefined) return null;
  const parsed = parser.parse(data, address);
  return parsed === null ? null : { program: parser.program, parsed };
}
