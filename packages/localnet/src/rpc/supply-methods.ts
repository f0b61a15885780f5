/**
 * getSupply and getLargestAccounts over every account the chain knows (the account index), with
 * agave 4.4's non-circulating supply (`calculate_non_circulating_supply`): its fixed list of
 * mainnet-beta addresses (listed on every cluster, a test validator's included, though they hold
 * nothing there), plus every stake account, initialized or delegated, whose lockup is in force
 * (its unix timestamp or epoch beyond the Clock's) or whose withdrawer is on agave's list of
 * withdraw authorities. agave collects them in a HashSet, so its order varies from node to node;
 * here it is the list's order, then the stake accounts'.
 */
import type { Address } from "@solana/kit";
import type { AccountIndex, IndexedAccount } from "../accounts/account-index.ts";
import { encodeBase58 } from "../accounts/base58.ts";
import { CLOCK_SYSVAR } from "../cluster/sysvars.ts";
import { NON_CIRCULATING_ACCOUNTS, NON_CIRCULATING_WITHDRAW_AUTHORITIES } from "./non-circulating-accounts.ts";
import { boolField, commitmentField, configParam, enumField, expectArity, withContext } from "./params.ts";
import type { MethodTable } from "./protocol.ts";

const STAKE_PROGRAM = "Stake11111111111111111111111111111111111111";
/** Bytes `StakeStateV2` needs to deserialize as Initialized (tag + Meta) and as Stake (+ Stake + flags). */
const INITIALIZED_SIZE = 4 + 120;
const STAKE_SIZE = 4 + 120 + 72 + 1;
const WITHDRAW_AUTHORITIES = new Set(NON_CIRCULATING_WITHDRAW_AUTHORITIES);

/** Whether a stake account counts as non-circulating (agave's match on `StakeStateV2`). */
function lockedOrListed(account: IndexedAccount, clock: { unixTimestamp: bigint; epoch: bigint }): boolean {
  const data = account.data;
  if (data.length < INITIALIZED_SIZE) return false;
  const dv = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const tag = dv.getUint32(0, true);
  if (tag !== 1 && !(tag === 2 && data.length >= STAKE_SIZE)) return false;
  // Meta: rent-exempt reserve, staker, withdrawer (44..76), lockup unix timestamp (76), epoch (84).
  const withdrawer = encodeBase58(data.subarray(44, 76));
  const inForce = dv.getBigInt64(76, true) > clock.unixTimestamp || dv.getBigUint64(84, true) > clock.epoch;
  return inForce || WITHDRAW_AUTHORITIES.has(withdrawer);
}

/** agave's NUM_LARGEST_ACCOUNTS. */
const NUM_LARGEST_ACCOUNTS = 20;

/** Creates the supply method table. */
export function createSupplyMethods({ index }: { index: AccountIndex }): MethodTable {
  const total = (): bigint => {
    let sum = 0n;
    for (const account of index.all()) sum += account.lamports;
    return sum;
  };
  /** agave's NonCirculatingSupply: the accounts (listed, then stake) and their lamports. */
  const nonCirculating = (): { accounts: string[]; lamports: bigint } => {
    const clockData = index.get(CLOCK_SYSVAR as Address)?.data;
    const clockView = clockData === undefined ? undefined : new DataView(clockData.buffer, clockData.byteOffset);
    const clock = {
      epoch: clockView?.getBigUint64(16, true) ?? 0n,
      unixTimestamp: clockView?.getBigInt64(32, true) ?? 0n,
    };
    const accounts = new Set(NON_CIRCULATING_ACCOUNTS);
    for (const account of index.byOwner(STAKE_PROGRAM as Address)) {
      if (lockedOrListed(account, clock)) accounts.add(account.address);
    }
    let lamports = 0n;
    for (const address of accounts) lamports += index.get(address as Address)?.lamports ?? 0n;
    return { accounts: [...accounts], lamports };
  };
  return {
    getSupply(params, ctx) {
      expectArity(params, 0, 1);
      const config = configParam(params[0]);
      const exclude = boolField(config, "excludeNonCirculatingAccountsList", false);
      const slot = ctx.slotAt(commitmentField(config));
      const supply = total();
      const non = nonCirculating();
      return withContext(slot, {
        circulating: supply - non.lamports,
        nonCirculating: non.lamports,
        nonCirculatingAccounts: exclude ? [] : non.accounts,
        total: supply,
      });
    },

    getLargestAccounts(params, ctx) {
      expectArity(params, 0, 1);
      const config = configParam(params[0]);
      const filter = enumField(config, "filter", ["circulating", "nonCirculating"] as const);
      boolField(config, "sortResults", true);
      const slot = ctx.slotAt(commitmentField(config));
      // agave: with a filter, the non-circulating accounts are the only ones (nonCirculating) or
      // left out (circulating).
      const non = filter === undefined ? undefined : new Set(nonCirculating().accounts);
      const largest: Array<{ address: string; lamports: bigint }> = [];
      for (const account of index.all()) {
        if (account.lamports === 0n) continue;
        if (non !== undefined && non.has(account.address) !== (filter === "nonCirculating")) continue;
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
