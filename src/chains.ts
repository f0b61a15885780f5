/**
 * The chains a server serves. Every request names a chain (empty = the default); handlers resolve
 * it here to the per-chain context that holds that chain's upstream and cores.
 */
import { SolgateError } from "./errors.ts";
import type { Upstream } from "./upstream/upstream.ts";
import type { ProgramAccounts } from "./programs/program-accounts.ts";
import type { Transactions } from "./transactions/transactions.ts";
import type { FeeMarket } from "./fees/fee-market.ts";
import type { Collections } from "./collections/collections.ts";
import type { CollectionFeed } from "./collections/feed/collection-feed.ts";
import type { Webhooks } from "./collections/feed/webhooks.ts";
import type { Accounts } from "./accounts/accounts.ts";
import type { Wallets } from "./wallets/wallets.ts";
import type { TokenHolders } from "./tokens/token-holders.ts";

/** Everything that serves one chain. Later cores (fees, transactions, collections) add fields here. */
export interface ChainContext {
  /** The chain's name as requests spell it (`localnet`, `mainnet`, ...). */
  readonly name: string;
  /** The only way to that chain's Solana JSON-RPC / DAS endpoints. */
  readonly upstream: Upstream;
  /** Program-account pages. */
  readonly programs: ProgramAccounts;
  /** Sends, prepares and follows transactions. */
  readonly transactions: Transactions;
  /** The priority-fee market (started and stopped by main.ts). */
  readonly fees: FeeMarket;
  /** NFT collections and their verified members. */
  readonly collections: Collections;
  /** The collections' change feed (WatchCollection); absent where none is built (tests of other cores). */
  readonly collectionFeed?: CollectionFeed;
  /** HTTP receivers of the feed's events, per API key; absent where none is built. */
  readonly webhooks?: Webhooks;
  /** Single accounts, decoded. */
  readonly accounts: Accounts;
  /** What wallets hold: token balances and NFTs. */
  readonly wallets: Wallets;
  /** The holders of fungible tokens. */
  readonly tokens: TokenHolders;
}

/** Resolves request chain names to their contexts. */
export interface ChainRegistry {
  /** The chain an empty `chain` field means. */
  readonly defaultChain: string;
  /** The served chain names, default first. */
  readonly names: readonly string[];
  /** The context of `name` (empty or undefined = default); throws SolgateError UNKNOWN_CHAIN otherwise. */
  resolve(name?: string): ChainContext;
  /** Every context, default first. */
  all(): readonly ChainContext[];
}

/**
 * Builds the registry. Throws if `chains` is empty, holds a name twice, or lacks `defaultChain`:
 * those are wiring bugs, caught at start-up rather than on the first request.
 */
export function createChainRegistry(chains: readonly ChainContext[], defaultChain: string): ChainRegistry {
  const byName = new Map<string, ChainContext>();
  for (const chain of chains) {
    if (byName.has(chain.name)) throw new Error(`chain "${chain.name}" is configured twice`);
    byName.set(chain.name, chain);
  }
  const fallback = byName.get(defaultChain);
  if (fallback === undefined) {
    throw new Error(
      `default chain "${defaultChain}" is not among the chains: ${[...byName.keys()].join(", ") || "(none)"}`,
    );
  }
  const ordered = [fallback, ...chains.filter((c) => c !== fallback)];
  const names = ordered.map((c) => c.name);
  return {
    defaultChain,
    names,
    resolve(name) {
      if (name === undefined || name === "") return fallback;
      const found = byName.get(name);
      if (found === undefined) {
        throw new SolgateError(
          "UNKNOWN_CHAIN",
          `unknown chain ${JSON.stringify(name.slice(0, 64))}; this server serves: ${names.join(", ")}`,
          { chain: name.slice(0, 64), served: names },
        );
      }
      return found;
    },
    all: () => ordered,
  };
}
