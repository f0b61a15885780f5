/**
 * The real mainnet accounts shipped in ./fixtures (three SMB Gen3 members, Mad Lads #9964),
 * loaded byte for byte with their real owners and lamports.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { WorldAccount } from "./world-types.ts";

const FIXTURES_DIR = join(import.meta.dirname, "fixtures");

/** The real collections the fixtures belong to (their collection NFTs are not among the fixtures). */
export const REAL_COLLECTIONS = [
  { name: "SMB Gen3", dir: "collection-smb-gen3", mint: "8Rt3Ayqth4DAiPnW9MDFi63TiQJHmohfTWLMQFHi4KZH" },
  { name: "Mad Lads", dir: "pnft-mad-lads-9964", mint: "J1S9H3QjnRtBbbuD4HjPV6RpRhwuk4zKbxsnCHuTgh9w" },
] as const;

interface FixtureFile {
  pubkey: string;
  lamports: number;
  owner: string;
  executable: boolean;
  data: [string, "base64"];
}

function isFixtureFile(value: unknown): value is FixtureFile {
  const v = value as FixtureFile;
  return (
    typeof v === "object" &&
    v !== null &&
    typeof v.pubkey === "string" &&
    typeof v.owner === "string" &&
    Number.isSafeInteger(v.lamports) &&
    Array.isArray(v.data) &&
    v.data[1] === "base64"
  );
}

/** Reads every fixture account of one real collection folder, sorted by address. */
export function loadFixtureAccounts(dir: string): WorldAccount[] {
  const folder = join(FIXTURES_DIR, dir);
  return readdirSync(folder)
    .filter((name) => name.endsWith(".json"))
    .sort()
    .map((name) => {
      const parsed: unknown = JSON.parse(readFileSync(join(folder, name), "utf8"));
      if (!isFixtureFile(parsed)) throw new Error(`unexpected fixture shape in ${dir}/${name}`);
      return {
        address: parsed.pubkey,
        owner: parsed.owner,
        lamports: BigInt(parsed.lamports),
        data: new Uint8Array(Buffer.from(parsed.data[0], "base64")),
        executable: parsed.executable,
      };
    });
}

/** All real fixture accounts. */
export function loadRealAccounts(): WorldAccount[] {
  return REAL_COLLECTIONS.flatMap((c) => loadFixtureAccounts(c.dir));
}
