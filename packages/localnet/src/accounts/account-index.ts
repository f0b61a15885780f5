/**
 * The localnet's index of every account the chain knows. LiteSVM can neither list accounts nor
 * filter a program scan, so the chain reports every address it touches (`record`), and the index
 * keeps, per owner program, the accounts in pubkey order, plus mint and owner buckets for SPL Token
 * accounts so that the common token scans do not walk the whole program.
 *
 * Each entry holds a copy of the account as LiteSVM had it when it was last recorded. Scans read
 * these copies: re-reading 100,000 matches through the addon takes ~1 s (measured), far over the
 * 300 ms budget for a 100,000-account getProgramAccounts. Single-account reads (getAccountInfo and
 * friends) go to LiteSVM directly. So the contract with the chain: every write to LiteSVM must be
 * followed by `record` of the addresses written (all account keys of a transaction, including
 * addresses loaded from lookup tables; airdrop and setAccount targets).
 */
import type { Address } from "@solana/kit";
import type { LiteSVM } from "litesvm";
import { decodeBase58, encodeBase58, isParsedPubkey, parsePubkey } from "./base58.ts";
import type { EncodingMemo } from "./encode-account.ts";
import { GENESIS_OWNERS, TOKEN_2022_PROGRAM, TOKEN_PROGRAM, VOLATILE_OWNERS } from "./program-ids.ts";
import { SortedBucket } from "./sorted-bucket.ts";
import { createSvmStore, type AccountSnapshot, type SvmStore } from "./svm-store.ts";
import { isValidTokenAccountData } from "./token-layout.ts";

/** An account as the index holds it. Entries are replaced, never mutated (except their memo). */
export interface IndexedAccount {
  readonly address: Address;
  readonly key: Uint8Array;
  /** `key` as a latin1 string: map key, and byte-order sort key. */
  readonly sortKey: string;
  readonly owner: Address;
  readonly lamports: bigint;
  readonly executable: boolean;
  readonly rentEpoch: bigint;
  readonly data: Uint8Array;
  /** Encodings computed on first use: scans send the same accounts again and again. */
  memo?: EncodingMemo;
}

/** An account to write into LiteSVM and the index in one step. */
export interface SeedAccount {
  readonly address: Address | Uint8Array;
  readonly owner: Address | Uint8Array;
  readonly lamports: bigint;
  readonly data: Uint8Array;
  /** Defaults to 2^64-1, what agave stamps on every rent-exempt account. */
  readonly rentEpoch?: bigint;
}

/** See the module comment. */
export interface AccountIndex {
  /** The LiteSVM accessor the index reads through (shared with the account methods). */
  readonly store: SvmStore;
  /** Number of accounts indexed. */
  readonly size: number;
  /** Re-reads these addresses from LiteSVM and updates (or drops) their entries. */
  record(addresses: Iterable<Address | Uint8Array>): void;
  /**
   * Validates, writes to LiteSVM and indexes accounts; returns how many were written. A bulk seed split
   * into chunks passes `{ sort: false }` on all but its last call: the buckets it touched are sorted once,
   * at the end of the last call, instead of after every chunk.
   */
  seedAccounts(accounts: Iterable<SeedAccount>, options?: { sort?: boolean }): number;
  /** One-account {@link AccountIndex.seedAccounts}. */
  seedAccount(account: SeedAccount): void;
  /** The indexed entry for an address. */
  get(address: Address): IndexedAccount | undefined;
  /** Every indexed account (volatile owners re-read first), in no particular order. */
  all(): Iterable<IndexedAccount>;
  /** Accounts owned by a program, in pubkey byte order (re-read first for volatile owners). */
  byOwner(owner: Address): readonly IndexedAccount[];
  /** Valid (initialized) token accounts of a token program for a mint, in pubkey order. */
  tokenAccountsByMint(program: Address, mint: Uint8Array): readonly IndexedAccount[];
  /** Valid (initialized) token accounts of a token program for an owner, in pubkey order. */
  tokenAccountsByOwner(program: Address, owner: Uint8Array): readonly IndexedAccount[];
}

export interface AccountIndexOptions {
  /** Owners read from LiteSVM at start; defaults to {@link GENESIS_OWNERS}. */
  readonly genesisOwners?: readonly Address[];
}

const U64_MAX = 0xffff_ffff_ffff_ffffn;
/** Seed batches at least this big leave their buckets sorted. */
const SORT_AFTER_SEEDING = 1000;

/** An address in the three forms the index uses. */
interface Identity {
  readonly sortKey: string;
  readonly address: Address;
  readonly key: Uint8Array;
}
const EMPTY: readonly IndexedAccount[] = Object.freeze([]);

function latin1(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1");
}

type TokenBuckets = Map<string, SortedBucket<IndexedAccount>>;

/** Creates the index over a LiteSVM instance and reads the genesis accounts into it. */
export function createAccountIndex(svm: LiteSVM, options: AccountIndexOptions = {}): AccountIndex {
  const store = createSvmStore(svm);
  const entries = new Map<string, IndexedAccount>(); // by sortKey
  const owners = new Map<string, SortedBucket<IndexedAccount>>();
  const byMint: Record<string, TokenBuckets> = { [TOKEN_PROGRAM]: new Map(), [TOKEN_2022_PROGRAM]: new Map() };
  const byTokenOwner: Record<string, TokenBuckets> = { [TOKEN_PROGRAM]: new Map(), [TOKEN_2022_PROGRAM]: new Map() };
  // Owners are few; caching their base58 saves ~3 µs per recorded account.
  const ownerNames = new Map<string, Address>();

  function ownerName(owner: Uint8Array): Address {
    const key = latin1(owner);
    let name = ownerNames.get(key);
    if (name === undefined) {
      name = encodeBase58(owner) as Address;
      ownerNames.set(key, name);
    }
    return name;
  }

  function bucket(map: Map<string, SortedBucket<IndexedAccount>>, key: string): SortedBucket<IndexedAccount> {
    let found = map.get(key);
    if (found === undefined) {
      found = new SortedBucket();
      map.set(key, found);
    }
    return found;
  }

  /** Token bucket keys of an entry: [mint, owner] latin1 strings, or null for non-token-accounts. */
  function tokenKeys(entry: IndexedAccount): [string, string] | null {
    if (byMint[entry.owner] === undefined || !isValidTokenAccountData(entry.data)) return null;
    return [latin1(entry.data.subarray(0, 32)), latin1(entry.data.subarray(32, 64))];
  }

  /** Bucket memberships of an entry: owner bucket, then token mint and owner buckets if any. */
  function memberships(entry: IndexedAccount): Array<[Map<string, SortedBucket<IndexedAccount>>, string]> {
    const result: Array<[Map<string, SortedBucket<IndexedAccount>>, string]> = [[owners, entry.owner]];
    const keys = tokenKeys(entry);
    if (keys !== null) result.push([byMint[entry.owner], keys[0]], [byTokenOwner[entry.owner], keys[1]]);
    return result;
  }

  /**
   * Puts an account into the index (or removes it when LiteSVM has none). An update that stays in
   * the same buckets replaces in place, keeping their cached order (a transfer must not cost a re-sort).
   */
  function put({ sortKey, address, key }: Identity, account: AccountSnapshot | null): void {
    const previous = entries.get(sortKey);
    const before = previous === undefined ? [] : memberships(previous);
    if (account === null) {
      if (previous !== undefined) for (const [map, bucketKey] of before) map.get(bucketKey)?.delete(sortKey);
      entries.delete(sortKey);
      return;
    }
    const entry: IndexedAccount = {
      address,
      key,
      sortKey,
      owner: ownerName(account.owner),
      lamports: account.lamports,
      executable: account.executable,
      rentEpoch: account.rentEpoch,
      data: account.data,
      memo: undefined, // declared up front: one object shape for every entry
    };
    entries.set(sortKey, entry);
    const after = memberships(entry);
    for (const [map, bucketKey] of before) {
      if (!after.some(([m, k]) => m === map && k === bucketKey)) map.get(bucketKey)?.delete(entry.sortKey);
    }
    for (const [map, bucketKey] of after) {
      const target = bucket(map, bucketKey);
      target.upsert(entry);
      seeded?.add(target);
    }
  }

  /** Buckets a bulk seed touched, sorted once at its end so the first scan does not pay for it. */
  let seeded: Set<SortedBucket<IndexedAccount>> | undefined;
  /** Accounts written by the seed calls since the last sort (a chunked bulk seed spans several calls). */
  let seededCount = 0;

  /**
   * Resolves an address given as text or bytes. The chain reports raw keys: for known accounts
   * that costs one latin1 conversion, no base58 work.
   */
  function identify(address: Address | Uint8Array): Identity {
    if (typeof address === "string") {
      const key = decodeBase58(address);
      if (key.length !== 32) throw new TypeError(`not a 32-byte address: ${address}`);
      return { sortKey: latin1(key), address, key };
    }
    if (!(address instanceof Uint8Array) || address.length !== 32) throw new TypeError("address must be 32 bytes");
    const sortKey = latin1(address);
    const known = entries.get(sortKey);
    if (known !== undefined) return known;
    return { sortKey, address: encodeBase58(address) as Address, key: Uint8Array.from(address) };
  }

  const ownerKeys = new Map<string, Uint8Array>();
  function ownerBytes(owner: Address | Uint8Array): Uint8Array {
    if (typeof owner !== "string") return owner;
    let bytes = ownerKeys.get(owner);
    if (bytes === undefined) {
      bytes = decodeBase58(owner);
      ownerKeys.set(owner, bytes);
    }
    return bytes;
  }

  const index: AccountIndex = {
    store,
    get size() {
      return entries.size;
    },
    record(addresses) {
      for (const item of addresses) {
        const identity = identify(item);
        put(identity, store.read(identity.key));
      }
    },
    seedAccounts(accounts, { sort = true } = {}) {
      let written = 0;
      seeded ??= new Set();
      try {
        for (const seed of accounts) {
          const identity = identify(seed.address);
          const snapshot: AccountSnapshot = {
            lamports: seed.lamports,
            owner: ownerBytes(seed.owner),
            executable: false,
            rentEpoch: seed.rentEpoch ?? U64_MAX,
            data: seed.data,
          };
          store.write(identity.key, snapshot); // validates; LiteSVM drops zero-lamport accounts
          put(identity, snapshot.lamports === 0n ? null : { ...snapshot, data: Uint8Array.from(seed.data) });
          written++;
        }
      } finally {
        seededCount += written;
        if (sort) {
          // Sorting 100,000 keys costs ~60 ms: do it now for big batches rather than in a request.
          if (seededCount >= SORT_AFTER_SEEDING) for (const target of seeded) target.inOrder();
          seeded = undefined;
          seededCount = 0;
        }
      }
      return written;
    },
    seedAccount(account) {
      index.seedAccounts([account]);
    },
    get(address) {
      const parsed = parsePubkey(address);
      return isParsedPubkey(parsed) ? entries.get(latin1(parsed.bytes)) : undefined;
    },
    all() {
      for (const owner of VOLATILE_OWNERS) {
        const found = owners.get(owner);
        if (found !== undefined) index.record(found.inOrder().map((entry) => entry.key));
      }
      return entries.values();
    },
    byOwner(owner) {
      const found = owners.get(owner);
      if (found === undefined) return EMPTY;
      if (VOLATILE_OWNERS.has(owner)) index.record(found.inOrder().map((entry) => entry.key));
      return owners.get(owner)?.inOrder() ?? EMPTY;
    },
    tokenAccountsByMint(program, mint) {
      return byMint[program]?.get(latin1(mint))?.inOrder() ?? EMPTY;
    },
    tokenAccountsByOwner(program, owner) {
      return byTokenOwner[program]?.get(latin1(owner))?.inOrder() ?? EMPTY;
    },
  };

  for (const owner of options.genesisOwners ?? GENESIS_OWNERS) {
    for (const { key, account } of store.programAccounts(decodeBase58(owner))) put(identify(key), account);
  }
  return index;
}
