/**
 * Block methods: getBlock (encodings, transactionDetails, rewards, maxSupportedTransactionVersion),
 * getBlocks, getBlocksWithLimit, getBlockTime and getRecentPerformanceSamples (with the
 * vote / non-vote split), over the blocks the chain still holds.
 */
import type { Block, TransactionRecord } from "../chain/block-store.ts";
import type { Chain } from "../chain/chain.ts";
import {
  assertAtLeastConfirmed,
  boolField,
  checkMinContextSlot,
  commitmentField,
  configParam,
  enumField,
  expectArity,
  u64Field,
  u64Param,
} from "./params.ts";
import { JsonRpcError, RpcErrorCode, invalidParams, type MethodTable } from "./protocol.ts";
import {
  checkEncodingForMaxVersion,
  checkVersionSupported,
  encodeAccountsMeta,
  encodeAccountsTransaction,
  encodeMeta,
  encodeTransaction,
  TRANSACTION_ENCODINGS,
  type TransactionEncoding,
} from "./encode-transaction.ts";

/** agave's MAX_GET_CONFIRMED_BLOCKS_RANGE. */
const MAX_BLOCKS_RANGE = 500_000n;
export const TRANSACTION_DETAILS = ["full", "accounts", "signatures", "none"] as const;
/** agave's PERFORMANCE_SAMPLES_LIMIT. */
const PERFORMANCE_SAMPLES_LIMIT = 720n;

function blockNotAvailable(slot: bigint): JsonRpcError {
  return new JsonRpcError(RpcErrorCode.BLOCK_NOT_AVAILABLE, `Block not available for slot ${slot}`);
}

/** How a block is rendered (getBlock's config; blockSubscribe's too). */
export interface BlockEncodingOptions {
  encoding: TransactionEncoding;
  details: (typeof TRANSACTION_DETAILS)[number];
  rewards: boolean;
  maxVersion: bigint | undefined;
}

/**
 * agave's `encode_with_options` of a block with the given transactions (all of the block's for
 * getBlock, the matching ones for a filtered blockSubscribe). Throws -32015 for a v0 transaction
 * the options do not admit.
 */
export function encodeBlock(
  block: Block,
  transactions: readonly TransactionRecord[],
  options: BlockEncodingOptions,
): Record<string, unknown> {
  const { encoding, details, rewards, maxVersion } = options;
  const out: Record<string, unknown> = {
    blockHeight: block.blockHeight,
    blockTime: block.blockTime,
    blockhash: block.blockhash,
    parentSlot: block.parentSlot,
    previousBlockhash: block.previousBlockhash,
  };
  if (details === "full" || details === "accounts") {
    for (const record of transactions) checkVersionSupported(record.tx, maxVersion);
    out.transactions = transactions.map((record) => {
      const entry: Record<string, unknown> =
        details === "full"
          ? { meta: encodeMeta(record, encoding === "jsonParsed"), transaction: encodeTransaction(record, encoding) }
          : { meta: encodeAccountsMeta(record), transaction: encodeAccountsTransaction(record) };
      if (maxVersion !== undefined) entry.version = record.tx.message.version;
      return entry;
    });
  } else if (details === "signatures") {
    out.signatures = transactions.map((record) => record.signature);
  }
  if (rewards) out.rewards = [];
  return out;
}

/** Creates the block method table. */
export function createBlockMethods({ chain }: { chain: Chain }): MethodTable {
  /** The block at `slot` if the commitment covers it; agave's errors otherwise. */
  const committedBlock = (slot: bigint, visibleUpTo: bigint): Block => {
    if (slot > visibleUpTo) throw blockNotAvailable(slot);
    const first = chain.firstAvailableBlock();
    if (slot < first) {
      throw new JsonRpcError(
        RpcErrorCode.BLOCK_CLEANED_UP,
        `Block ${slot} cleaned up, does not exist on node. First available block: ${first}`,
      );
    }
    const block = chain.block(slot);
    if (block === undefined) {
      throw new JsonRpcError(
        RpcErrorCode.SLOT_SKIPPED,
        `Slot ${slot} was skipped, or missing due to ledger jump to recent snapshot`,
      );
    }
    return block;
  };

  return {
    getBlock(params, ctx) {
      expectArity(params, 1, 2);
      const slot = u64Param(params[0]);
      const raw = params[1];
      const config = typeof raw === "string" ? { encoding: raw } : configParam(raw);
      const encoding = enumField(config, "encoding", TRANSACTION_ENCODINGS) ?? "json";
      const details = enumField(config, "transactionDetails", TRANSACTION_DETAILS) ?? "full";
      const rewards = boolField(config, "rewards", true);
      const maxVersion = u64Field(config, "maxSupportedTransactionVersion");
      checkEncodingForMaxVersion(encoding, maxVersion);
      const commitment = commitmentField(config);
      assertAtLeastConfirmed(commitment);
      const block = committedBlock(slot, ctx.slotAt(commitment));
      return encodeBlock(block, block.transactions, { encoding, details, rewards, maxVersion });
    },

    getBlocks(params, ctx) {
      expectArity(params, 1, 3);
      const start = u64Param(params[0]);
      // The second parameter is either the end slot or the config (agave's RpcBlocksConfigWrapper).
      let end: bigint | undefined;
      let config: Record<string, unknown> = {};
      if (params[1] !== undefined && params[1] !== null && typeof params[1] === "object")
        config = configParam(params[1]);
      else if (params[1] !== undefined && params[1] !== null) end = u64Param(params[1]);
      if (params[2] !== undefined) config = configParam(params[2]);
      const commitment = commitmentField(config);
      assertAtLeastConfirmed(commitment);
      const visible = ctx.slotAt(commitment);
      checkMinContextSlot(visible, u64Field(config, "minContextSlot"));
      const requestedEnd = end ?? start + MAX_BLOCKS_RANGE;
      const last = requestedEnd < visible ? requestedEnd : visible;
      if (last < start) return [];
      if (last - start > MAX_BLOCKS_RANGE) throw invalidParams(`Slot range too large; max ${MAX_BLOCKS_RANGE}`);
      return chain.blockSlots(start, last);
    },

    getBlocksWithLimit(params, ctx) {
      expectArity(params, 2, 3);
      const start = u64Param(params[0]);
      const limit = u64Param(params[1], "usize");
      const config = configParam(params[2]);
      const commitment = commitmentField(config);
      assertAtLeastConfirmed(commitment);
      if (limit > MAX_BLOCKS_RANGE) throw invalidParams(`Limit too large; max ${MAX_BLOCKS_RANGE}`);
      const visible = ctx.slotAt(commitment);
      checkMinContextSlot(visible, u64Field(config, "minContextSlot"));
      if (limit === 0n) return [];
      const last = start + limit - 1n < visible ? start + limit - 1n : visible;
      return chain.blockSlots(start, last).slice(0, Number(limit));
    },

    getRecentPerformanceSamples(params, ctx) {
      expectArity(params, 0, 1);
      const limit =
        params[0] === undefined || params[0] === null ? PERFORMANCE_SAMPLES_LIMIT : u64Param(params[0], "usize");
      if (limit > PERFORMANCE_SAMPLES_LIMIT) throw invalidParams(`Invalid limit; max ${PERFORMANCE_SAMPLES_LIMIT}`);
      // agave samples every 60 s; here each sample covers the held blocks of one 60 s window of
      // block time, newest first. The localnet has no votes, so every transaction is a non-vote one.
      const tip = ctx.slotAt("processed");
      const samples: {
        slot: bigint;
        numTransactions: number;
        numNonVoteTransactions: number;
        numSlots: number;
        samplePeriodSecs: number;
      }[] = [];
      let current: (typeof samples)[number] | undefined;
      let windowStart = 0;
      for (let slot = tip; slot >= chain.firstAvailableBlock() && samples.length <= Number(limit); slot--) {
        const block = chain.block(slot);
        if (block === undefined) break;
        if (current === undefined || block.blockTime < windowStart) {
          if (samples.length === Number(limit)) break;
          current = { slot, numTransactions: 0, numNonVoteTransactions: 0, numSlots: 0, samplePeriodSecs: 60 };
          windowStart = block.blockTime - 59;
          samples.push(current);
        }
        current.numTransactions += block.transactions.length;
        current.numNonVoteTransactions += block.transactions.length;
        current.numSlots++;
      }
      return samples;
    },

    getBlockTime(params, ctx) {
      expectArity(params, 1, 1);
      const slot = u64Param(params[0]);
      return committedBlock(slot, ctx.slotAt("processed")).blockTime;
    },
  };
}
