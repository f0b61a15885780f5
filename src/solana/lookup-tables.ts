/**
 * Address lookup tables, read through the upstream and cached, so that a v0 draft's write locks
 * include the accounts it loads from tables. A table only grows (extend) or dies (deactivate, close),
 * so a cached copy is right for every index it holds; an index past its end means "refetch once".
 */
import type { Address, GetMultipleAccountsApi, Rpc } from "@solana/kit";
import { base58OfKey } from "./base58-key.ts";
import { SolgateError } from "../errors.ts";
import { ADDRESS_LOOKUP_TABLE_PROGRAM } from "./program-ids.ts";
import type { CompiledMessage } from "./wire-transaction.ts";
import { BoundedMap } from "../bounded-map.ts";

/** Bytes before the first address: type u32, deactivation slot u64, last extended slot u64 and its start index u8, authority Option<Pubkey>, padding u16. */
export const LOOKUP_TABLE_HEADER_BYTES = 56;
/** getMultipleAccounts takes at most this many addresses. */
const MAX_ACCOUNTS_PER_CALL = 100;

/** Options of {@link createLookupTableResolver}. */
export interface LookupTableResolverOptions {
  rpc: Rpc<GetMultipleAccountsApi>;
  /** Commitment of the table reads (default: the node's own). */
  commitment?: "processed" | "confirmed" | "finalized";
  /** How long a table stays cached (default 60 s). */
  ttlMs?: number;
  /** The most tables cached (default 10,000; least recently used go first). */
  maxTables?: number;
  now?: () => number;
}

/** Resolves the accounts a v0 message loads from lookup tables. */
export interface LookupTableResolver {
  /**
   * The write-locked addresses `message` loads from its tables, in the runtime's order (table by table,
   * each table's writable indexes in order). Legacy messages load none.
   * @throws SolgateError INVALID_TRANSACTION when a table does not exist, is not a lookup table, or lacks an index.
   */
  writableOf(message: CompiledMessage): Promise<string[]>;
  /**
   * Every address `message` loads from its tables, in the runtime's order: the writable ones of every table,
   * then the read-only ones. Legacy messages load none.
   * @throws SolgateError INVALID_TRANSACTION as {@link writableOf}.
   */
  loadedOf(message: CompiledMessage): Promise<{ writable: string[]; readonly: string[] }>;
  /** The addresses a table holds, from cache or the upstream; `fresh` skips the cache. */
  tableAddresses(table: string, fresh?: boolean): Promise<readonly string[]>;
  /** Tables cached now. */
  size(): number;
}

/**
 * Decodes a lookup table account's data into its addresses.
 * @throws Error when the data is not a lookup table (wrong type tag or length).
 */
export function decodeLookupTable(data: Uint8Array): string[] {
  if (data.length < LOOKUP_TABLE_HEADER_BYTES || (data.length - LOOKUP_TABLE_HEADER_BYTES) % 32 !== 0) {
    throw new Error(`lookup table data is ${data.length} bytes; expected 56 + 32 * n`);
  }
  const type = data[0] | (data[1] << 8) | (data[2] << 16) | (data[3] << 24);
  // 0 = uninitialized, 1 = a lookup table.
  if (type !== 1) throw new Error(`account is not an initialized lookup table (type ${type})`);
  const addresses: string[] = [];
  for (let at = LOOKUP_TABLE_HEADER_BYTES; at < data.length; at += 32) addresses.push(base58OfKey(data, at));
  return addresses;
}

interface CachedTable {
  readonly addresses: readonly string[];
  readonly fetchedAt: number;
}

/** Creates a resolver with its own cache. */
export function createLookupTableResolver(options: LookupTableResolverOptions): LookupTableResolver {
  const ttlMs = options.ttlMs ?? 60_000;
  const maxTables = options.maxTables ?? 10_000;
  const now = options.now ?? Date.now;
  const cache = new BoundedMap<string, CachedTable>(maxTables);
  // Concurrent estimates naming the same uncached table share one upstream call.
  const inFlight = new Map<string, Promise<readonly string[]>>();

  function cached(table: string): readonly string[] | undefined {
    const entry = cache.get(table);
    if (entry === undefined) return undefined;
    if (now() - entry.fetchedAt > ttlMs) {
      cache.delete(table);
      return undefined;
    }
    cache.delete(table); // re-insert: Map order is the LRU order
    cache.set(table, entry);
    return entry.addresses;
  }

  function store(table: string, addresses: readonly string[]): void {
    cache.set(table, { addresses, fetchedAt: now() });
  }

  async function fetchTables(tables: readonly string[]): Promise<void> {
    for (let i = 0; i < tables.length; i += MAX_ACCOUNTS_PER_CALL) {
      const chunk = tables.slice(i, i + MAX_ACCOUNTS_PER_CALL);
      const { value } = await options.rpc
        .getMultipleAccounts(
          chunk.map((t) => t as Address),
          {
            encoding: "base64",
            ...(options.commitment === undefined ? {} : { commitment: options.commitment }),
          },
        )
        .send();
      chunk.forEach((table, j) => {
        const account = value[j];
        if (account === null || account === undefined) {
          throw new SolgateError("INVALID_TRANSACTION", `address lookup table ${table} does not exist`, { table });
        }
        if (account.owner !== ADDRESS_LOOKUP_TABLE_PROGRAM) {
          throw new SolgateError(
            "INVALID_TRANSACTION",
            `account ${table} is not an address lookup table (owner ${account.owner})`,
            { table },
          );
        }
        let addresses: string[];
        try {
          addresses = decodeLookupTable(Buffer.from(account.data[0], "base64"));
        } catch (error) {
          throw new SolgateError(
            "INVALID_TRANSACTION",
            `address lookup table ${table} does not decode: ${(error as Error).message}`,
            { table },
          );
        }
        store(table, addresses);
      });
    }
  }

  async function load(tables: readonly string[], fresh: boolean): Promise<Map<string, readonly string[]>> {
    const out = new Map<string, readonly string[]>();
    const missing: string[] = [];
    const waits: Promise<void>[] = [];
    for (const table of new Set(tables)) {
      const hit = fresh ? undefined : cached(table);
      if (hit !== undefined) out.set(table, hit);
      else if (!fresh && inFlight.has(table)) waits.push(inFlight.get(table)!.then((a) => void out.set(table, a)));
      else missing.push(table);
    }
    if (missing.length > 0) {
      const fetching = fetchTables(missing);
      for (const table of missing) {
        const one = fetching.then(() => cache.get(table)!.addresses);
        one.catch(() => {}); // the caller below sees the error; this copy must not go unhandled
        inFlight.set(table, one);
        waits.push(one.then((a) => void out.set(table, a)));
      }
      fetching.finally(() => missing.forEach((t) => inFlight.delete(t))).catch(() => {});
    }
    await Promise.all(waits);
    return out;
  }

  async function loadedOf(message: CompiledMessage): Promise<{ writable: string[]; readonly: string[] }> {
    if (message.version !== 0 || !message.addressTableLookups?.length) return { writable: [], readonly: [] };
    const lookups = message.addressTableLookups;
    let tables = await load(
      lookups.map((l) => String(l.lookupTableAddress)),
      false,
    );
    const short = lookups.filter((l) => {
      const size = tables.get(String(l.lookupTableAddress))!.length;
      return [...l.writableIndexes, ...l.readonlyIndexes].some((i) => i >= size);
    });
    if (short.length > 0) {
      // The table may have been extended since it was cached.
      const fresh = await load(
        short.map((l) => String(l.lookupTableAddress)),
        true,
      );
      tables = new Map([...tables, ...fresh]);
    }
    const writable: string[] = [];
    const readonly: string[] = [];
    for (const lookup of lookups) {
      const table = String(lookup.lookupTableAddress);
      const addresses = tables.get(table)!;
      for (const index of [...lookup.writableIndexes, ...lookup.readonlyIndexes]) {
        if (index >= addresses.length) {
          throw new SolgateError(
            "INVALID_TRANSACTION",
            `address lookup table ${table} has ${addresses.length} addresses; the transaction uses index ${index}`,
            { table, index },
          );
        }
      }
      for (const index of lookup.writableIndexes) writable.push(addresses[index]);
      for (const index of lookup.readonlyIndexes) readonly.push(addresses[index]);
    }
    return { writable, readonly };
  }

  return {
    async writableOf(message) {
      return (await loadedOf(message)).writable;
    },
    loadedOf,
    async tableAddresses(table, fresh = false) {
      return (await load([table], fresh)).get(table)!;
    },
    size: () => cache.size,
  };
}
