/**
 * Walking a collection's members through DAS: getAssetsByGroup sorted by id ascending with a
 * keyset bound (`after` the last id seen), each item checked for membership here. Items the
 * provider should not have sent (unverified, another collection's, burnt) are skipped but still
 * move the position on, so a page that filtering emptied is followed by another call, up to a bound.
 */
import bs58 from "bs58";
import { isVerifiedMember } from "./asset-mapping.ts";
import { MAX_DAS_LIMIT } from "./das-client.ts";
import type { CollectionsDas, DasAsset } from "./das-client.ts";

/** Options of {@link scanMembers}. */
export interface ScanOptions {
  collection: string;
  /** Start after this id (exclusive); undefined from the start. */
  after?: string;
  /** Stop once this many members were found (Infinity: to the end). */
  want: number;
  /** Most DAS calls made. */
  maxCalls: number;
  /** Receives each member, in id order. */
  onMember: (asset: DasAsset) => void;
  signal?: AbortSignal;
}

/** Where a scan stopped. */
export interface ScanResult {
  found: number;
  /** The last id consumed (member or not): the keyset position to continue from. */
  last: string | undefined;
  /** True when the provider has nothing after `last`. */
  ended: boolean;
  calls: number;
}

function idBytes(id: string): Uint8Array | undefined {
  try {
    const bytes = bs58.decode(id);
    return bytes.length === 32 ? bytes : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Scans members. Each call asks for one item more than still wanted (up to DAS's 1,000), so the
 * last page is recognised as such; the extra item is left for the next page, not consumed.
 */
export async function scanMembers(
  das: Pick<CollectionsDas, "getGroupPage">,
  options: ScanOptions,
): Promise<ScanResult> {
  let last = options.after;
  let lastBytes = last === undefined ? undefined : idBytes(last);
  let found = 0;
  let calls = 0;
  let ended = false;
  while (found < options.want && calls < options.maxCalls) {
    const ask = Math.min(MAX_DAS_LIMIT, options.want - found + 1);
    const page = await das.getGroupPage({
      collection: options.collection,
      after: last,
      limit: ask,
      signal: options.signal,
    });
    calls++;
    let progressed = false;
    for (const asset of page) {
      if (found >= options.want) break;
      const bytes = idBytes(asset.id);
      // Not after the keyset position (or not an id): a provider that ignored `after` or repeated itself.
      if (bytes === undefined || (lastBytes !== undefined && Buffer.compare(bytes, lastBytes) <= 0)) continue;
      last = asset.id;
      lastBytes = bytes;
      progressed = true;
      if (isVerifiedMember(asset, options.collection)) {
        found++;
        options.onMember(asset);
      }
    }
    // A short page is the end; so is a full one that moved nothing on (a provider ignoring `after`
    // would otherwise hand the client the same cursor forever).
    if (page.length < ask || !progressed) {
      ended = true;
      break;
    }
  }
  return { found, last, ended, calls };
}
