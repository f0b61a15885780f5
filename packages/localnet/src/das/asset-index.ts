/**
 * The DAS index: digital assets built from the chain's Token Metadata, mint and token accounts
 * (plus compressed assets, which have no accounts), kept current as accounts change, with
 * collection groups in asset-id byte order for keyset paging.
 *
 * Membership follows the on-chain `collection` field: an asset is listed under a collection when
 * its metadata names it, `verified` tells whether the collection authority signed for it, and a
 * burnt asset (mint supply 0, or metadata closed) is listed nowhere, as the reference indexer does.
 */
import bs58 from "bs58";
import { TOKEN_METADATA_PROGRAM, TOKEN_PROGRAM } from "../world/program-ids.ts";
import {
  decodeMint,
  decodeTokenAccount,
  MINT_SIZE,
  TOKEN_ACCOUNT_SIZE,
  TokenAccountState,
  type MintFields,
} from "../world/spl-token-layout.ts";
import { decodeMetadata, METADATA_KEY, TokenStandard, type TokenMetadata } from "../world/token-metadata.ts";
import type { CompressedAsset, OffchainJson } from "../world/world-types.ts";

/** The account fields the index reads. */
export interface AccountView {
  owner: string;
  data: Uint8Array;
}

/** Who holds a single-owner asset, from its token account with a non-zero balance. */
export interface Holding {
  tokenAccount: string;
  owner: string;
  delegate: string | null;
  frozen: boolean;
}

/** One indexed asset. Records are mutated in place as the chain changes. */
export interface AssetRecord {
  readonly id: string;
  /** The id's bytes as latin1: byte order is DAS's `id` sort order. */
  readonly sortKey: string;
  /** Order of first sight (sortBy "created"). */
  readonly created: number;
  /** Bumped on every change (sortBy "updated" / "recent_action"). */
  updated: number;
  metadata: TokenMetadata;
  metadataAddress: string | null;
  metadataClosed: boolean;
  mint: MintFields | null;
  compressed: CompressedAsset | null;
  /** Token accounts holding a non-zero balance, by address (single-owner assets only). */
  holdings: Map<string, Holding>;
  /** The collection this record is listed under, and whether verified (null: none). */
  listedIn: { group: string; verified: boolean } | null;
}

/** A collection group: its members (verified or not) and cached id-ordered views. */
interface Group {
  members: Map<string, AssetRecord>;
  verifiedCount: number;
  sortedAll: AssetRecord[] | null;
  sortedVerified: AssetRecord[] | null;
}

export interface AssetIndex {
  /** Applies account states (null: the account is gone); metadata and mints before token accounts. */
  applyAccounts(accounts: Iterable<[address: string, account: AccountView | null]>): void;
  addCompressed(asset: CompressedAsset): void;
  get(id: string): AssetRecord | undefined;
  /** Members of a collection in ascending id byte order; unverified ones only when asked. */
  groupMembers(group: string, includeUnverified: boolean): readonly AssetRecord[];
  /** Verified, unburnt members of a collection. */
  groupSize(group: string): number;
  /** Unburnt assets `owner` holds (a token account with a balance, or a compressed leaf), in ascending id byte order. */
  ownedBy(owner: string): readonly AssetRecord[];
  /** The stand-in for the asset's fetched off-chain JSON, when the world generated it. */
  offchain(uri: string): OffchainJson | undefined;
  readonly size: number;
}

export interface AssetIndexOptions {
  offchainJson?: ReadonlyMap<string, OffchainJson>;
}

const latin1 = (bytes: Uint8Array): string =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1");

/** Fungible standards are owned by many accounts: DAS does not track a single holder for them. */
export function isSingleOwner(metadata: TokenMetadata, mint: MintFields | null): boolean {
  const standard = metadata.tokenStandard;
  if (standard === TokenStandard.Fungible || standard === TokenStandard.FungibleAsset) return false;
  if (standard === null && mint !== null && mint.supply > 1n) return false;
  return true;
}

export function isBurnt(record: AssetRecord): boolean {
  if (record.compressed !== null) return record.compressed.burnt === true;
  return record.metadataClosed || (record.mint !== null && record.mint.supply === 0n);
}

/** Creates an empty index. */
export function createAssetIndex(options: AssetIndexOptions = {}): AssetIndex {
  const assets = new Map<string, AssetRecord>();
  const bySortKey = new Map<string, AssetRecord>();
  const byMetadataAddress = new Map<string, AssetRecord>();
  const byTokenAccount = new Map<string, AssetRecord>();
  const groups = new Map<string, Group>();
  let clock = 0;

  function relist(record: AssetRecord): void {
    const collection = record.metadata.collection;
    const next =
      collection === null || isBurnt(record)
        ? null
        : { group: collection.key as string, verified: collection.verified };
    const prev = record.listedIn;
    if (prev?.group === next?.group && prev?.verified === next?.verified) return;
    if (prev !== null) {
      const group = groups.get(prev.group)!;
      group.members.delete(record.id);
      if (prev.verified) group.verifiedCount--;
      group.sortedAll = group.sortedVerified = null;
    }
    if (next !== null) {
      let group = groups.get(next.group);
      if (group === undefined) {
        group = { members: new Map(), verifiedCount: 0, sortedAll: null, sortedVerified: null };
        groups.set(next.group, group);
      }
      group.members.set(record.id, record);
      if (next.verified) group.verifiedCount++;
      group.sortedAll = group.sortedVerified = null;
    }
    record.listedIn = next;
  }

  function newRecord(id: string, idBytes: Uint8Array, metadata: TokenMetadata): AssetRecord {
    const record: AssetRecord = {
      id,
      sortKey: latin1(idBytes),
      created: clock++,
      updated: clock,
      metadata,
      metadataAddress: null,
      metadataClosed: false,
      mint: null,
      compressed: null,
      holdings: new Map(),
      listedIn: null,
    };
    assets.set(id, record);
    bySortKey.set(record.sortKey, record);
    return record;
  }

  function applyMetadata(address: string, account: AccountView | null): void {
    const known = byMetadataAddress.get(address);
    if (account === null || account.owner !== TOKEN_METADATA_PROGRAM || account.data[0] !== METADATA_KEY) {
      if (known !== undefined) {
        known.metadataClosed = true;
        known.updated = ++clock;
        relist(known);
      }
      return;
    }
    let metadata: TokenMetadata;
    try {
      metadata = decodeMetadata(account.data);
    } catch {
      return; // not a readable MetadataV1: the reference indexer skips it too
    }
    const id = metadata.mint as string;
    const record = assets.get(id) ?? newRecord(id, bs58.decode(id), metadata);
    record.metadata = metadata;
    record.metadataAddress = address;
    record.metadataClosed = false;
    record.updated = ++clock;
    byMetadataAddress.set(address, record);
    relist(record);
  }

  function applyMint(address: string, account: AccountView | null): void {
    const record = assets.get(address);
    if (record === undefined || record.compressed !== null) return;
    // A mint cannot be closed under the classic Token program; if it is gone anyway, nothing is left.
    record.mint =
      account === null
        ? { mintAuthority: null, supply: 0n, decimals: 0, freezeAuthority: null }
        : account.owner === TOKEN_PROGRAM
          ? decodeMint(account.data)
          : null;
    record.updated = ++clock;
    relist(record);
  }

  function applyTokenAccount(address: string, account: AccountView | null): void {
    const previous = byTokenAccount.get(address);
    // Most token accounts hold fungible tokens: look the mint up before decoding anything.
    const tracked =
      account !== null && account.data.length === TOKEN_ACCOUNT_SIZE
        ? bySortKey.get(latin1(account.data.subarray(0, 32)))
        : undefined;
    if (tracked === undefined && previous === undefined) return;
    const fields = tracked !== undefined && account!.owner === TOKEN_PROGRAM ? decodeTokenAccount(account!.data) : null;
    const record = fields === null ? undefined : tracked;
    if (previous !== undefined && previous !== record) {
      previous.holdings.delete(address);
      previous.updated = ++clock;
      byTokenAccount.delete(address);
    }
    if (fields === null || record === undefined || !isSingleOwner(record.metadata, record.mint)) return;
    if (fields.amount === 0n) {
      if (record.holdings.delete(address)) record.updated = ++clock;
      byTokenAccount.delete(address);
      return;
    }
    record.holdings.set(address, {
      tokenAccount: address,
      owner: bs58.encode(fields.owner),
      delegate: fields.delegate === null ? null : bs58.encode(fields.delegate),
      frozen: fields.state === TokenAccountState.Frozen,
    });
    record.updated = ++clock;
    byTokenAccount.set(address, record);
  }

  function sortedMembers(group: Group, includeUnverified: boolean): AssetRecord[] {
    if (includeUnverified) {
      group.sortedAll ??= [...group.members.values()].sort((a, b) => (a.sortKey < b.sortKey ? -1 : 1));
      return group.sortedAll;
    }
    group.sortedVerified ??= sortedMembers(group, true).filter((r) => r.listedIn?.verified === true);
    return group.sortedVerified;
  }

  return {
    applyAccounts(accounts) {
      const tokenAccounts: [string, AccountView | null][] = [];
      const mints: [string, AccountView | null][] = [];
      for (const [address, account] of accounts) {
        if (account === null) {
          if (byMetadataAddress.has(address)) applyMetadata(address, null);
          else if (assets.has(address)) mints.push([address, null]);
          else if (byTokenAccount.has(address)) tokenAccounts.push([address, null]);
        } else if (account.owner === TOKEN_METADATA_PROGRAM) {
          applyMetadata(address, account);
        } else if (account.owner === TOKEN_PROGRAM && account.data.length === MINT_SIZE) {
          mints.push([address, account]);
        } else if (account.owner === TOKEN_PROGRAM && account.data.length === TOKEN_ACCOUNT_SIZE) {
          tokenAccounts.push([address, account]);
        } else if (byMetadataAddress.has(address)) {
          applyMetadata(address, account); // reassigned away from Token Metadata: closed
        }
      }
      for (const [address, account] of mints) applyMint(address, account);
      for (const [address, account] of tokenAccounts) applyTokenAccount(address, account);
    },
    addCompressed(asset) {
      const record = assets.get(asset.id) ?? newRecord(asset.id, bs58.decode(asset.id), asset.metadata);
      record.metadata = asset.metadata;
      record.compressed = asset;
      record.holdings = new Map([
        [asset.id, { tokenAccount: "", owner: asset.owner, delegate: asset.delegate, frozen: false }],
      ]);
      record.updated = ++clock;
      relist(record);
    },
    get: (id) => assets.get(id),
    groupMembers(group, includeUnverified) {
      const found = groups.get(group);
      return found === undefined ? [] : sortedMembers(found, includeUnverified);
    },
    groupSize: (group) => groups.get(group)?.verifiedCount ?? 0,
    ownedBy(owner) {
      // A scan: the localnet holds tens of thousands of assets, and a wallet's listing is rare next to a group's.
      const owned: AssetRecord[] = [];
      for (const record of assets.values()) {
        if (isBurnt(record)) continue;
        for (const holding of record.holdings.values()) {
          if (holding.owner === owner) {
            owned.push(record);
            break;
          }
        }
      }
      return owned.sort((a, b) => (a.sortKey < b.sortKey ? -1 : 1));
    },
    offchain: (uri) => options.offchainJson?.get(uri),
    get size() {
      return assets.size;
    },
  };
}
