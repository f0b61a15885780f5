/**
 * getSupply and getLargestAccounts over every account the chain knows (the account index). A
 * development genesis has no non-circulating accounts (agave's list names mainnet addresses and
 * their stake accounts), so everything circulates.
 */
import type { AccountIndex } from "../accounts/account-index.ts";
import { boolField, commitmentField, configParam, enumField, expectArity, withContext } from "./params.ts";
import type { MethodTable } from "./protocol.ts";

/** agave's NUM_LARGEST_ACCOUNTS. */
const NUM_LARGEST_ACCOUNTS = 20;

/** Creates the supply method table. */
export function createSupplyMethods({ index }: { index: AccountIndex }): MethodTable {
  const total = (): bigint => {
    let sum = 0n;
    for (const account of index.all()) sum += account.lamports;
    return sum;
  };
  return {
    getSupply(params, ctx) {
      expectArity(params, 0, 1);
      const config = configParam(params[0]);
      boolField(config, "excludeNonCirculatingAccountsList", false);
      const slot = ctx.slotAt(commitmentField(config));
      const supply = total();
      return withContext(slot, { circulating: supply, nonCirculating: 0n, nonCirculatingAccounts: [], total: supply });
    },

    getLargestAccounts(params, ctx) {
      expectArity(params, 0, 1);
      const config = configParam(params[0]);
      const filter = enumField(config, "filter", ["circulating", "nonCirculating"] as const);
      boolField(config, "sortResults", true);
      const slot = ctx.slotAt(commitmentField(config));
      if (filter === "nonCirculating") return withContext(slot, []);
      const largest: Array<{ address: string; lamports: bigint }> = [];
      for (const account of index.all()) {
        if (account.lamports === 0n) continue;
        if (largest.length === NUM_LARGEST_ACCOUNTS && account.lamports <= largest[largest.length - 1]!.lamports)
          continue;
        largest.push({ address: account.address, lamports: account.lamports });
        largest.sort((a, b) => (a.lamports === b.lamports ? 0 : a.lamports > b.lamports ? -1 : 1));
        if (largest.length > NUM_LARGEST_ACCOUNTS) largest.pop();
      }
      return withContext(slot, largest);
    },
  };
}
