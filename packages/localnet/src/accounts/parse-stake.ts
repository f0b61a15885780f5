/**
 * agave's `parse_stake` (account-decoder, program "stake"): bincode `StakeStateV2` (u32 tag),
 * `uninitialized`, `initialized` / `delegated` with `meta` and (for delegated) `stake`, or
 * `rewardsPool`. Amounts and epochs of the delegation are strings, `creditsObserved` a number.
 * Data shorter than the variant needs is unparseable (trailing bytes are fine, as bincode allows).
 */
import { encodeBase58 } from "./base58.ts";
import { jsonI64, jsonU64 } from "./json.ts";
import type { ParsedProgramData } from "./parse-program-data.ts";

const META_END = 4 + 8 + 64 + 48;
const STAKE_END = META_END + 72 + 1;

function meta(data: Uint8Array, dv: DataView) {
  return {
    rentExemptReserve: dv.getBigUint64(4, true).toString(),
    authorized: { staker: encodeBase58(data.subarray(12, 44)), withdrawer: encodeBase58(data.subarray(44, 76)) },
    lockup: {
      unixTimestamp: jsonI64(dv.getBigInt64(76, true)),
      epoch: jsonU64(dv.getBigUint64(84, true)),
      custodian: encodeBase58(data.subarray(92, 124)),
    },
  };
}

/** The parsed stake account, or null when agave could not deserialize it. */
export function parseStake(data: Uint8Array): ParsedProgramData | null {
  if (data.length < 4) return null;
  const dv = new DataView(data.buffer, data.byteOffset, data.byteLength);
  switch (dv.getUint32(0, true)) {
    case 0:
      return { type: "uninitialized" };
    case 1:
      if (data.length < META_END) return null;
      return { type: "initialized", info: { meta: meta(data, dv), stake: null } };
    case 2:
      if (data.length < STAKE_END) return null;
      return {
        type: "delegated",
        info: {
          meta: meta(data, dv),
          stake: {
            delegation: {
              voter: encodeBase58(data.subarray(124, 156)),
              stake: dv.getBigUint64(156, true).toString(),
              activationEpoch: dv.getBigUint64(164, true).toString(),
              deactivationEpoch: dv.getBigUint64(172, true).toString(),
              // agave 4.4's UiDelegation no longer shows the (deprecated) warmupCooldownRate f64
              // that the bytes 180..188 still hold.
            },
            creditsObserved: jsonU64(dv.getBigUint64(188, true)),
          },
        },
      };
    case 3:
      return { type: "rewardsPool" };
    default:
      return null;
  }
}
