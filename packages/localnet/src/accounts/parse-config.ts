/**
 * agave 4.4's `parse_config` (account-decoder, program "config"): validator info accounts only
 * (`validatorInfo`: the keys, and the JSON text stored after them, parsed) when the first key is
 * the validator-info id. Config data follows a short-vec of `(pubkey, signer)` keys. 4.4 dropped 3.0's
 * `stakeConfig` branch, so the stake config account falls back to base64 under jsonParsed.
 */
import { encodeBase58 } from "./base58.ts";
import type { ParsedProgramData } from "./parse-program-data.ts";

const VALIDATOR_INFO = "Va1idator1nfo111111111111111111111111111111";

/** A short-vec length (1-3 bytes of 7-bit groups), or null when malformed. */
function shortVec(data: Uint8Array, at: number): [number, number] | null {
  let value = 0;
  for (let i = 0; i < 3; i++) {
    const byte = data[at + i];
    if (byte === undefined) return null;
    value |= (byte & 0x7f) << (7 * i);
    if ((byte & 0x80) === 0) {
      if (i > 0 && byte === 0) return null; // non-canonical
      return [value, i + 1];
    }
  }
  return null;
}

function configKeys(data: Uint8Array): { keys: Array<{ pubkey: string; signer: boolean }>; end: number } | null {
  const length = shortVec(data, 0);
  if (length === null) return null;
  let at = length[1];
  const keys: Array<{ pubkey: string; signer: boolean }> = [];
  for (let i = 0; i < length[0]; i++) {
    if (at + 33 > data.length || data[at + 32]! > 1) return null;
    keys.push({ pubkey: encodeBase58(data.subarray(at, at + 32)), signer: data[at + 32] === 1 });
    at += 33;
  }
  return { keys, end: at };
}

/** The parsed config account, or null when agave could not parse it. */
export function parseConfig(data: Uint8Array, _address: string | undefined): ParsedProgramData | null {
  const parsedKeys = configKeys(data);
  if (parsedKeys === null) return null;
  const rest = data.subarray(parsedKeys.end);
  const dv = new DataView(rest.buffer, rest.byteOffset, rest.byteLength);
  if (parsedKeys.keys.length === 0 || parsedKeys.keys[0]!.pubkey !== VALIDATOR_INFO) return null;
  if (rest.length < 8) return null;
  const length = dv.getBigUint64(0, true);
  if (length > BigInt(rest.length - 8)) return null;
  let configData: unknown;
  try {
    configData = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(rest.subarray(8, 8 + Number(length))));
  } catch {
    return null;
  }
  return { type: "validatorInfo", info: { keys: parsedKeys.keys, configData } };
}
