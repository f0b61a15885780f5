/**
 * Methods about the chain's clock and fees: getHealth, getVersion, getSlot, getBlockHeight,
 * getEpochInfo, getLatestBlockhash, isBlockhashValid, getFeeForMessage,
 * getRecentPrioritizationFees, and a few cheap companions (getGenesisHash,
 * getTransactionCount, getFirstAvailableBlock, minimumLedgerSlot, getEpochSchedule).
 */
import bs58 from "bs58";
import { MAX_PROCESSING_AGE } from "../chain/blockhash-window.ts";
import type { Chain } from "../chain/chain.ts";
import { epochOfSlot, slotsInEpoch } from "../chain/epoch-schedule.ts";
import { decodeWirePayload } from "../wire/binary-encoding.ts";
import { decodeMessage, VERSIONED_MESSAGE_TYPE } from "../wire/decode-transaction.ts";
import { resolveAccountKeys } from "../wire/account-keys.ts";
import { transactionFee } from "../wire/fees.ts";
import {
  API_VERSION,
  FEATURE_SET,
  base58Key,
  configParam,
  contextSlot,
  expectArity,
  stringParam,
  withContext,
} from "./params.ts";
import { JsonRpcError, RpcErrorCode, invalidParams, type MethodTable } from "./protocol.ts";

/** agave's `--health-check-slot-distance` default. */
const HEALTH_CHECK_SLOT_DISTANCE = 128n;
/** agave's MAX_TX_ACCOUNT_LOCKS, the input limit of getRecentPrioritizationFees. */
const MAX_TX_ACCOUNT_LOCKS = 128;
/** Blocks getRecentPrioritizationFees reports (agave's cache size, MAX_NUM_RECENT_BLOCKS). */
const PRIORITIZATION_FEE_BLOCKS = 150;

const decode58 = (text: string): Uint8Array | null => {
  try {
    return bs58.decode(text);
  } catch {
    return null;
  }
};

/** What these methods need. */
export interface ChainMethodDeps {
  chain: Chain;
  /** Slots the served view lags behind (the lag fault); health degrades past 128. */
  lagSlots(): number;
}

/** Creates the clock and fee method table. */
export function createChainMethods({ chain, lagSlots }: ChainMethodDeps): MethodTable {
  // A view lagging beyond the retained blocks sees the oldest one still held.
  const blockOf = (slot: bigint) => chain.block(slot) ?? chain.block(chain.firstAvailableBlock())!;

  return {
    getHealth(params) {
      expectArity(params, 0, 0);
      const behind = BigInt(lagSlots());
      if (behind > HEALTH_CHECK_SLOT_DISTANCE) {
        throw new JsonRpcError(RpcErrorCode.NODE_UNHEALTHY, `Node is behind by ${behind} slots`, {
          numSlotsBehind: behind,
        });
      }
      return "ok";
    },

    getVersion(params) {
      expectArity(params, 0, 0);
      return { "feature-set": FEATURE_SET, "solana-core": API_VERSION };
    },

    getGenesisHash(params) {
      expectArity(params, 0, 0);
      return chain.block(chain.genesisSlot)?.blockhash ?? chain.block(chain.firstAvailableBlock())!.blockhash;
    },

    getSlot(params, ctx) {
      expectArity(params, 0, 1);
      return contextSlot(ctx, configParam(params[0]));
    },

    getBlockHeight(params, ctx) {
      expectArity(params, 0, 1);
      return chain.blockHeightAt(contextSlot(ctx, configParam(params[0])));
    },

    getTransactionCount(params, ctx) {
      expectArity(params, 0, 1);
      return blockOf(contextSlot(ctx, configParam(params[0]))).transactionCount;
    },

    getEpochInfo(params, ctx) {
      expectArity(params, 0, 1);
      const slot = contextSlot(ctx, configParam(params[0]));
      const { epoch, slotIndex } = epochOfSlot(chain.epochSchedule, slot);
      return {
        absoluteSlot: slot,
        blockHeight: chain.blockHeightAt(slot),
        epoch,
        slotIndex,
        slotsInEpoch: slotsInEpoch(chain.epochSchedule, epoch),
        transactionCount: blockOf(slot).transactionCount,
      };
    },

    getEpochSchedule(params) {
      expectArity(params, 0, 0);
      const s = chain.epochSchedule;
      return {
        firstNormalEpoch: s.firstNormalEpoch,
        firstNormalSlot: s.firstNormalSlot,
        leaderScheduleSlotOffset: s.leaderScheduleSlotOffset,
        slotsPerEpoch: s.slotsPerEpoch,
        warmup: s.warmup,
      };
    },

    getFirstAvailableBlock(params) {
      expectArity(params, 0, 0);
      return chain.firstAvailableBlock();
    },

    minimumLedgerSlot(params) {
      expectArity(params, 0, 0);
      return chain.firstAvailableBlock();
    },

    getLatestBlockhash(params, ctx) {
      expectArity(params, 0, 1);
      const slot = contextSlot(ctx, configParam(params[0]));
      const block = blockOf(slot);
      return withContext(slot, {
        blockhash: block.blockhash,
        lastValidBlockHeight: block.blockHeight + MAX_PROCESSING_AGE,
      });
    },

    isBlockhashValid(params, ctx) {
      expectArity(params, 1, 2);
      const text = stringParam(params[0]);
      const bytes = text.length > 44 ? null : decode58(text);
      if (bytes === null) throw invalidParams(text.length > 44 ? "WrongSize" : "Invalid");
      if (bytes.length !== 32) throw invalidParams("WrongSize");
      const slot = contextSlot(ctx, configParam(params[1]));
      const produced = chain.lastValidBlockHeight(text);
      const height = chain.blockHeightAt(slot);
      const valid = produced !== undefined && produced - MAX_PROCESSING_AGE <= height && height <= produced;
      return withContext(slot, valid);
    },

    getFeeForMessage(params, ctx) {
      expectArity(params, 1, 2);
      const bytes = decodeWirePayload(stringParam(params[0]), "base64", VERSIONED_MESSAGE_TYPE);
      const slot = contextSlot(ctx, configParam(params[1]));
      let message;
      try {
        message = decodeMessage(bytes, VERSIONED_MESSAGE_TYPE);
        if (message.lookups.length > 0) {
          resolveAccountKeys(
            message,
            (address) => {
              const account = chain.executor.readAccount(address);
              return account && { owner: account.owner, data: account.data };
            },
            slot,
          );
        }
      } catch (err) {
        if (err instanceof JsonRpcError && err.message.startsWith("invalid transaction: ")) {
          throw invalidParams(`invalid transaction message: ${err.message.slice("invalid transaction: ".length)}`);
        }
        throw err;
      }
      const produced = chain.lastValidBlockHeight(message.recentBlockhash);
      const height = chain.blockHeightAt(slot);
      const known = produced !== undefined && produced - MAX_PROCESSING_AGE <= height && height <= produced;
      // agave also prices a message whose nonce account holds its blockhash (a durable-nonce message).
      return withContext(slot, known || chain.holdsNonce(message) ? transactionFee(message) : null);
    },

    getRecentPrioritizationFees(params, ctx) {
      expectArity(params, 0, 1);
      const raw = params[0] ?? [];
      if (!Array.isArray(raw)) throw invalidParams(`Invalid params: invalid type: ${typeof raw}, expected a sequence.`);
      if (raw.length > MAX_TX_ACCOUNT_LOCKS)
        throw invalidParams(`Too many inputs provided; max ${MAX_TX_ACCOUNT_LOCKS}`);
      const accounts = raw.map((a) => base58Key(a, decode58));
      // agave's cache: a block enters once optimistically confirmed, and only when a transaction counted
      // (chain/prioritization-fees.ts); it holds the newest 150 such blocks, oldest first.
      const tip = ctx.slotAt("confirmed");
      const held: bigint[] = [];
      for (let slot = tip; slot >= chain.firstAvailableBlock() && held.length < PRIORITIZATION_FEE_BLOCKS; slot--) {
        const block = chain.block(slot);
        if (block !== undefined && block.minUnitPrice !== null) held.push(slot);
      }
      return held.reverse().map((slot) => {
        const block = chain.block(slot)!;
        let fee = block.minUnitPrice ?? 0n;
        for (const account of accounts) {
          const accountFee = block.accountMinUnitPrice.get(account);
          if (accountFee !== undefined && accountFee > fee) fee = accountFee;
        }
        return { prioritizationFee: fee, slot };
      });
    },
  };
}
