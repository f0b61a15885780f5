/**
 * Inflation as agave 3.0 reports it for a development genesis (`Inflation::default()`):
 * getInflationGovernor, getInflationRate and getInflationReward. The localnet pays no epoch rewards,
 * so getInflationReward answers null per address once the epoch-boundary block exists, and agave's
 * errors before that.
 */
import bs58 from "bs58";
import type { Chain } from "../chain/chain.ts";
import { epochOfSlot, firstSlotInEpoch } from "../chain/epoch-schedule.ts";
import {
  base58Key,
  commitmentField,
  commitmentOnlyParam,
  configParam,
  contextSlot,
  expectArity,
  u64Field,
} from "./params.ts";
import { JsonRpcError, RpcErrorCode, invalidParams, type MethodTable } from "./protocol.ts";

/** agave 4.4's MAX_GET_INFLATION_REWARD_ADDRESSES (solana-rpc-client-types request.rs). */
const MAX_INFLATION_REWARD_ADDRESSES = 32;

/** agave's `Inflation::default()`. */
export const INFLATION = {
  initial: 0.08,
  terminal: 0.015,
  taper: 0.15,
  foundation: 0.05,
  foundationTerm: 7.0,
} as const;
/**
 * Slots per year of a 400 ms slot (64 ticks of 6.25 ms): agave's `years_as_slots(1.0, ...)` with
 * SECONDS_PER_YEAR = 365.242199 days.
 */
const SLOTS_PER_YEAR = (365.242_199 * 24.0 * 60.0 * 60.0 * 1_000_000_000) / 6_250_000 / 64;

/** agave's `Inflation::total(year)`. */
export function inflationTotal(year: number): number {
  const tapered = INFLATION.initial * (1.0 - INFLATION.taper) ** year;
  return tapered > INFLATION.terminal ? tapered : INFLATION.terminal;
}

/** agave's `Inflation::foundation(year)`. */
export function inflationFoundation(year: number): number {
  return year < INFLATION.foundationTerm ? inflationTotal(year) * INFLATION.foundation : 0.0;
}

const decode58 = (text: string): Uint8Array | null => {
  try {
    return bs58.decode(text);
  } catch {
    return null;
  }
};

/** Creates the inflation method table. */
export function createInflationMethods({ chain }: { chain: Chain }): MethodTable {
  const schedule = chain.epochSchedule;
  return {
    getInflationGovernor(params) {
      expectArity(params, 0, 1);
      commitmentOnlyParam(params[0]);
      return { ...INFLATION };
    },

    getInflationRate(params, ctx) {
      expectArity(params, 0, 0);
      const { epoch } = epochOfSlot(schedule, ctx.slotAt("finalized"));
      // Inflation runs from genesis (its features are active there): the year is the slots before
      // the current epoch over slots per year.
      const year = Number(firstSlotInEpoch(schedule, epoch)) / SLOTS_PER_YEAR;
      const total = inflationTotal(year);
      const foundation = inflationFoundation(year);
      return { epoch, foundation, total, validator: total - foundation };
    },

    getInflationReward(params, ctx) {
      expectArity(params, 1, 2);
      if (!Array.isArray(params[0]))
        throw invalidParams(
          `Invalid params: invalid type: ${typeof params[0] === "string" ? `string ${JSON.stringify(params[0])}` : "map"}, expected a sequence.`,
        );
      // agave 4.4: at most MAX_GET_INFLATION_REWARD_ADDRESSES (32), checked before the keys.
      if ((params[0] as unknown[]).length > MAX_INFLATION_REWARD_ADDRESSES) {
        throw invalidParams(`Too many inputs provided; max ${MAX_INFLATION_REWARD_ADDRESSES}`);
      }
      const addresses = (params[0] as unknown[]).map((a) => base58Key(a, decode58));
      const config = configParam(params[1]);
      const requested = u64Field(config, "epoch");
      const epoch =
        requested ??
        (() => {
          const current = epochOfSlot(schedule, contextSlot(ctx, config)).epoch;
          return current > 0n ? current - 1n : 0n;
        })();
      // Rewards of an epoch are paid in the first block of the next one.
      const firstSlot = firstSlotInEpoch(schedule, epoch + 1n);
      const firstAvailable = chain.firstAvailableBlock();
      if (firstSlot < firstAvailable) {
        throw new JsonRpcError(
          RpcErrorCode.BLOCK_CLEANED_UP,
          `Block ${firstSlot} cleaned up, does not exist on node. First available block: ${firstAvailable}`,
        );
      }
      const commitment = commitmentField(config);
      if (commitment === "processed") throw invalidParams("Method does not support commitment below `confirmed`");
      const visible = contextSlot(ctx, config);
      const boundary = chain.blockSlots(firstSlot, visible)[0];
      if (boundary === undefined) {
        throw new JsonRpcError(RpcErrorCode.BLOCK_NOT_AVAILABLE, `Block not available for slot ${firstSlot}`);
      }
      return addresses.map(() => null);
    },
  };
}
