/**
 * The localnet's account methods: getAccountInfo, getMultipleAccounts, getBalance,
 * getMinimumBalanceForRentExemption, getProgramAccounts, getTokenAccountsByOwner,
 * getTokenAccountsByDelegate, getTokenAccountBalance, getTokenSupply and getTokenLargestAccounts,
 * answering as an agave node does, over LiteSVM and the {@link AccountIndex}.
 *
 * Wiring (in the localnet's composition root):
 *   const index = createAccountIndex(svm);            // once, after LiteSVM is configured
 *   chain: index.record(keys) after every executed transaction (all account keys, lookup-table
 *          addresses included), airdrop and setAccount;  bulk data: index.seedAccounts([...])
 *   server: Object.assign(methods, createAccountMethods({ svm, index })); write responses with toJson.
 *   other encoders (simulateTransaction's `accounts`): encodeAccount(account, encoding, slice,
 *          liveMintLookup(index.store)); give `account.address` so sysvars parse too.
 */
import type { LiteSVM } from "litesvm";
import type { MethodTable } from "../rpc/protocol.ts";
import type { AccountIndex } from "./account-index.ts";
import { createAccountReadMethods } from "./account-methods.ts";
import { createProgramAccountsMethods } from "./program-accounts.ts";
import { DEFAULT_API_VERSION } from "./response.ts";
import type { AccountServices } from "./services.ts";
import { createTokenMethods } from "./token-methods.ts";

export {
  createAccountIndex,
  type AccountIndex,
  type AccountIndexOptions,
  type IndexedAccount,
  type SeedAccount,
} from "./account-index.ts";
export { jsonU64, parseJson, toJson, type JsonU64 } from "./json.ts";
export { DEFAULT_API_VERSION } from "./response.ts";
export { encodeAccount, type AccountEncoding, type EncodableAccount, type UiAccount } from "./encode-account.ts";
export { liveMintLookup } from "./services.ts";

/** What the account methods need. */
export interface AccountMethodsDeps {
  /** The account index, created over the chain's LiteSVM with {@link createAccountIndex}. */
  readonly index: AccountIndex;
  /** The chain's LiteSVM; optional, and when given it must be the instance the index was built on. */
  readonly svm?: LiteSVM;
  /**
   * `context.apiVersion` in responses; agave sends its version (fixtures: "2.2.7"). Should match
   * what getVersion reports as `solana-core`. Pass "" to omit the field.
   */
  readonly apiVersion?: string;
}

/** Creates the account method handlers (a {@link MethodTable} to merge into the server's). */
export function createAccountMethods(deps: AccountMethodsDeps): MethodTable {
  if (deps.svm !== undefined && !deps.index.store.isBackedBy(deps.svm)) {
    throw new Error("createAccountMethods: index was built over a different LiteSVM instance");
  }
  const services: AccountServices = {
    index: deps.index,
    store: deps.index.store,
    apiVersion: deps.apiVersion ?? DEFAULT_API_VERSION,
  };
  return {
    ...createAccountReadMethods(services),
    ...createProgramAccountsMethods(services),
    ...createTokenMethods(services),
  };
}
