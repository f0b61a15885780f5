/**
 * jsonParsed instructions: agave parses instructions of programs it knows into
 * `{ parsed: { info, type }, program, programId, stackHeight }` and leaves the rest partially
 * decoded (`{ accounts, data, programId, stackHeight }`). This parses the System program's common
 * instructions; everything else stays partially decoded, which is still a shape a node sends.
 */
import bs58 from "bs58";
import { SYSTEM_PROGRAM } from "../accounts/program-ids.ts";

type Info = Record<string, unknown>;

function u64(data: Uint8Array, at: number): bigint | undefined {
  if (data.length < at + 8) return undefined;
  return new DataView(data.buffer, data.byteOffset, data.byteLength).getBigUint64(at, true);
}

/** Parses a System program instruction; undefined when agave would not parse it. */
function parseSystem(data: Uint8Array, accounts: string[]): { type: string; info: Info } | undefined {
  if (data.length < 4 || data[1] !== 0 || data[2] !== 0 || data[3] !== 0) return undefined;
  const need = (n: number) => accounts.length >= n;
  switch (data[0]) {
    case 0: {
      const lamports = u64(data, 4);
      const space = u64(data, 12);
      if (lamports === undefined || space === undefined || data.length !== 52 || !need(2)) return undefined;
      return {
        type: "createAccount",
        info: {
          source: accounts[0],
          newAccount: accounts[1],
          lamports,
          space,
          owner: bs58.encode(data.subarray(20, 52)),
        },
      };
    }
    case 1:
      if (data.length !== 36 || !need(1)) return undefined;
      return { type: "assign", info: { account: accounts[0], owner: bs58.encode(data.subarray(4, 36)) } };
    case 2: {
      const lamports = u64(data, 4);
      if (lamports === undefined || data.length !== 12 || !need(2)) return undefined;
      return { type: "transfer", info: { source: accounts[0], destination: accounts[1], lamports } };
    }
    case 4:
      if (data.length !== 4 || !need(3)) return undefined;
      return {
        type: "advanceNonce",
        info: { nonceAccount: accounts[0], recentBlockhashesSysvar: accounts[1], nonceAuthority: accounts[2] },
      };
    case 8: {
      const space = u64(data, 4);
      if (space === undefined || data.length !== 12 || !need(1)) return undefined;
      return { type: "allocate", info: { account: accounts[0], space } };
    }
    default:
      return undefined;
  }
}

/** One instruction in jsonParsed form. */
export function parseInstruction(
  programId: string,
  accounts: string[],
  data: Uint8Array,
  stackHeight: number | null,
): Record<string, unknown> {
  const parsed = programId === SYSTEM_PROGRAM ? parseSystem(data, accounts) : undefined;
  if (parsed !== undefined) return { parsed, program: "system", programId, stackHeight };
  return { accounts, data: bs58.encode(data), programId, stackHeight };
}
