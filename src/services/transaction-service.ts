/** TransactionService: SendTransaction, GetTransactionStatus, WatchStatus, PrepareTransaction; request to core call to response. */
import type { ServiceImpl } from "@connectrpc/connect";
import { create, fromJson } from "@bufbuild/protobuf";
import { GetTransactionStatusResponseSchema } from "../../gen/solgate/v1/transaction_service_pb.js";
import type { GetTransactionStatusResponse } from "../../gen/solgate/v1/transaction_service_pb.js";
import { shareResponse } from "./shared-response.ts";
import { ladderHandlers } from "./ladder-handlers.ts";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate, ValueSchema } from "@bufbuild/protobuf/wkt";
import type { TransactionService } from "../../gen/solgate/v1/transaction_service_pb.js";
import type {
  WatchBundleRequest,
  WatchBundleResponseSchema,
  WatchStatusRequest,
  WatchStatusResponseSchema,
} from "../../gen/solgate/v1/transaction_service_pb.js";
import { BundleStatus, TransactionStatus } from "../../gen/solgate/v1/transaction_pb.js";
import type {
  BundleStatusRecordSchema,
  LamportsSchema,
  SendResultSchema,
  TransactionErrorSchema,
  TransactionStatusRecordSchema,
} from "../../gen/solgate/v1/transaction_pb.js";
import { PriorityLevel, TipLevel } from "../../gen/solgate/v1/fee_pb.js";
import type { PriorityFee, Tip } from "../../gen/solgate/v1/fee_pb.js";
import { TIP_LEVELS } from "../fees/tip-levels.ts";
import type { TipLevelName } from "../fees/tip-levels.ts";
import { parseTip } from "../transactions/prepare-tip.ts";
import type { TipChoice } from "../transactions/prepare-tip.ts";
import type { ChainRegistry } from "../chains.ts";
import { toFeeEstimateMessage } from "./fee-service.ts";
import { PRIORITY_LEVELS } from "../fees/fee-estimate.ts";
import type { PriorityLevelName } from "../fees/fee-estimate.ts";
import { parsePriorityFee } from "../transactions/priority-fee.ts";
import type { PriorityFeeChoice } from "../transactions/priority-fee.ts";
import type { ChainError } from "../transactions/transaction-error.ts";
import type { StatusRecord, TransactionState } from "../transactions/transaction-status.ts";
import type { SendOutcome } from "../transactions/send-transaction.ts";
import type { BundleRecord, BundleState } from "../transactions/bundles.ts";

/**
 * WatchStatus as a stream of response messages: the router's handler and the lean gRPC stream path
 * (src/server/grpc-stream-path.ts) both serve this.
 */
export async function* watchStatusEvents(
  chains: ChainRegistry,
  req: WatchStatusRequest,
  signal: AbortSignal,
): AsyncGenerator<MessageInitShape<typeof WatchStatusResponseSchema>> {
  for await (const event of chains.resolve(req.chain).transactions.watch(req.signature, signal)) {
    yield event.kind === "record"
      ? { event: { case: "record", value: toRecord(event.record) } }
      : { event: { case: "heartbeat", value: { slot: event.slot } } };
  }
}

/** WatchBundle as a stream of response messages. */
export async function* watchBundleEvents(
  chains: ChainRegistry,
  req: WatchBundleRequest,
  signal: AbortSignal,
): AsyncGenerator<MessageInitShape<typeof WatchBundleResponseSchema>> {
  for await (const event of chains.resolve(req.chain).transactions.bundles.watch(req.bundleId, signal)) {
    yield event.kind === "record"
      ? { event: { case: "bundle", value: toBundleRecord(event.record) } }
      : { event: { case: "heartbeat", value: { slot: event.slot } } };
  }
}

/** The Connect implementation of TransactionService. */
export function createTransactionServiceImpl(deps: { chains: ChainRegistry }): ServiceImpl<typeof TransactionService> {
  return {
    async sendTransaction(req, ctx) {
      const core = deps.chains.resolve(req.chain).transactions;
      const outcome = await core.send({
        wire: req.transaction,
        priorityFee: priorityFeeOf(req.priorityFee),
        confirm: req.confirm ?? true,
        skipPreflight: req.skipPreflight,
        signal: ctx.signal,
      });
      return { result: toSendResult(outcome) };
    },
    async getTransactionStatus(req) {
      const record = await deps.chains.resolve(req.chain).transactions.status(req.signature);
      // A record that has not changed is the same object (the engine keeps it): its answer is built, and encoded
      // by the unary path, once.
      let response = statusResponses.get(record);
      if (response === undefined) {
        response = shareResponse(create(GetTransactionStatusResponseSchema, { record: toRecord(record) }));
        statusResponses.set(record, response);
      }
      return response;
    },
    watchStatus(req, ctx) {
      return watchStatusEvents(deps.chains, req, ctx.signal);
    },
    async prepareTransaction(req, ctx) {
      const core = deps.chains.resolve(req.chain).transactions;
      const prepared = await core.prepare({
        wire: req.transaction,
        priorityFee: priorityFeeOf(req.priorityFee),
        replaceComputeBudget: req.replaceComputeBudget,
        tip: tipOf(req.tip),
        signal: ctx.signal,
      });
      return {
        transaction: prepared.wire,
        blockhash: prepared.blockhash,
        lastValidBlockHeight: prepared.lastValidBlockHeight,
        computeUnitLimit: prepared.computeUnitLimit,
        loadedAccountsDataSizeLimit: prepared.loadedAccountsDataSizeLimit ?? 0,
        computeUnitPrice: prepared.computeUnitPrice,
        estimate: prepared.estimate === undefined ? undefined : toFeeEstimateMessage(prepared.estimate),
        expectedFee: lamports(prepared.expectedFee),
        tip: prepared.tip && {
          account: prepared.tip.account,
          lamports: prepared.tip.lamports,
          level: prepared.tip.level === undefined ? TipLevel.UNSPECIFIED : TIP_LEVEL_NUMBERS[prepared.tip.level],
          levelLamports: prepared.tip.levelLamports,
          clamped: prepared.tip.clamped,
          raisedToMinimum: prepared.tip.raisedToMinimum,
        },
      };
    },
    async sendBundle(req) {
      const record = await deps.chains.resolve(req.chain).transactions.bundles.send(req.transactions);
      return { bundle: toBundleRecord(record) };
    },
    async getBundleStatus(req) {
      const record = await deps.chains.resolve(req.chain).transactions.bundles.status(req.bundleId);
      return { bundle: toBundleRecord(record) };
    },
    watchBundle(req, ctx) {
      return watchBundleEvents(deps.chains, req, ctx.signal);
    },
    ...ladderHandlers(deps),
  };
}

const BUNDLE_STATUS: Record<BundleState, BundleStatus> = {
  pending: BundleStatus.PENDING,
  landed: BundleStatus.LANDED,
  confirmed: BundleStatus.CONFIRMED,
  finalized: BundleStatus.FINALIZED,
  failed: BundleStatus.FAILED,
  invalid: BundleStatus.INVALID,
  expired: BundleStatus.EXPIRED,
};

function toBundleRecord(record: BundleRecord): MessageInitShape<typeof BundleStatusRecordSchema> {
  return {
    bundleId: record.bundleId,
    status: BUNDLE_STATUS[record.state],
    engineStatus: record.engineStatus ?? "",
    reason: record.reason ?? "",
    slot: record.slot,
    signatures: [...record.signatures],
    transactions: record.transactions.map(toRecord),
    lastValidBlockHeight: record.lastValidBlockHeight,
    updatedAt: timestampFromDate(record.updatedAt),
  };
}

const LEVEL_NAMES: Partial<Record<PriorityLevel, string>> = {
  [PriorityLevel.UNSPECIFIED]: "auto",
  ...Object.fromEntries(
    PRIORITY_LEVELS.map((name) => [PriorityLevel[name.toUpperCase() as Uppercase<PriorityLevelName>], name]),
  ),
};

function priorityFeeOf(fee: PriorityFee | undefined): PriorityFeeChoice {
  const choice = fee?.choice;
  if (choice === undefined || choice.case === undefined) return parsePriorityFee(undefined);
  if (choice.case === "microLamports") return parsePriorityFee({ microLamports: choice.value });
  // An enum number this server does not know reaches the core as such and is refused there.
  return parsePriorityFee({ level: LEVEL_NAMES[choice.value] ?? `level ${choice.value}` });
}

const TIP_LEVEL_NUMBERS = Object.fromEntries(
  TIP_LEVELS.map((name) => [name, TipLevel[name.toUpperCase() as Uppercase<TipLevelName>]]),
) as Record<TipLevelName, TipLevel>;

const TIP_LEVEL_NAMES: Partial<Record<TipLevel, string>> = {
  [TipLevel.UNSPECIFIED]: "",
  ...Object.fromEntries(TIP_LEVELS.map((name) => [TIP_LEVEL_NUMBERS[name], name])),
};

function tipOf(tip: Tip | undefined): TipChoice | undefined {
  if (tip === undefined) return undefined;
  const choice = tip.choice;
  if (choice.case === undefined) return parseTip({});
  if (choice.case === "lamports") return parseTip({ lamports: choice.value });
  // An enum number this server does not know reaches the core as such and is refused there.
  return parseTip({ level: TIP_LEVEL_NAMES[choice.value] ?? `level ${choice.value}` });
}

const STATUS: Record<TransactionState, TransactionStatus> = {
  submitted: TransactionStatus.SUBMITTED,
  confirmed: TransactionStatus.CONFIRMED,
  finalized: TransactionStatus.FINALIZED,
  failed: TransactionStatus.FAILED,
  expired: TransactionStatus.EXPIRED,
};

function lamports(value: bigint): MessageInitShape<typeof LamportsSchema> {
  return { lamports: value, sol: Number(value) / 1e9 };
}

function toError(error: ChainError): MessageInitShape<typeof TransactionErrorSchema> {
  return {
    code: error.code,
    message: error.message,
    instructionIndex: error.instructionIndex,
    customCode: error.customCode,
    raw: fromJson(ValueSchema, error.raw),
  };
}

const statusResponses = new WeakMap<StatusRecord, GetTransactionStatusResponse>();

function toRecord(record: StatusRecord): MessageInitShape<typeof TransactionStatusRecordSchema> {
  return {
    signature: record.signature,
    status: STATUS[record.state],
    slot: record.slot,
    error: record.error === undefined ? undefined : toError(record.error),
    fee: record.fee === undefined ? undefined : lamports(record.fee),
    lastValidBlockHeight: record.lastValidBlockHeight,
    updatedAt: timestampFromDate(record.updatedAt),
    waiting: record.waiting && {
      odds: record.waiting.odds,
      withinSlots: record.waiting.withinSlots,
      landingComputeUnitPrice: record.waiting.landingPrice,
      computeUnitPrice: record.waiting.price,
    },
  };
}

function toSendResult(outcome: SendOutcome): MessageInitShape<typeof SendResultSchema> {
  return {
    signature: outcome.signature,
    status: STATUS[outcome.state],
    slot: outcome.slot,
    fee: outcome.fee === undefined ? undefined : lamports(outcome.fee),
    error: outcome.error === undefined ? undefined : toError(outcome.error),
    computeUnitPrice: outcome.computeUnitPrice,
    requestedComputeUnitPrice: outcome.requestedComputeUnitPrice,
    lastValidBlockHeight: outcome.lastValidBlockHeight,
  };
}
