/** TransactionService's fee-ladder RPCs (PrepareLadder, SendLadder, GetLadderStatus, WatchLadder, CancelLadder): request to core call to response. */
import type { HandlerContext } from "@connectrpc/connect";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { fromJson } from "@bufbuild/protobuf";
import { timestampFromDate, ValueSchema } from "@bufbuild/protobuf/wkt";
import { LadderStatus, RungState } from "../../gen/solgate/v1/ladder_pb.js";
import type { LadderRecordSchema } from "../../gen/solgate/v1/ladder_pb.js";
import type {
  CancelLadderRequest,
  GetLadderStatusRequest,
  PrepareLadderRequest,
  SendLadderRequest,
  WatchLadderRequest,
  WatchLadderResponseSchema,
} from "../../gen/solgate/v1/transaction_service_pb.js";
import type { ChainRegistry } from "../chains.ts";
import type { Ladder, LadderState, RungState as RungStateName } from "../transactions/ladder/ladder-record.ts";
import { slotsToLand } from "../transactions/ladder/ladder-record.ts";

const STATUS: Record<LadderState, LadderStatus> = {
  pending: LadderStatus.PENDING,
  landed: LadderStatus.LANDED,
  confirmed: LadderStatus.CONFIRMED,
  finalized: LadderStatus.FINALIZED,
  failed: LadderStatus.FAILED,
  nonce_advanced: LadderStatus.NONCE_ADVANCED,
  expired: LadderStatus.EXPIRED,
  cancelled: LadderStatus.CANCELLED,
};

const RUNG: Record<RungStateName, RungState> = {
  waiting: RungState.WAITING,
  submitted: RungState.SUBMITTED,
  landed: RungState.LANDED,
  dead: RungState.DEAD,
};

/** A ladder as the contract's LadderRecord. */
export function toLadderRecord(ladder: Ladder): MessageInitShape<typeof LadderRecordSchema> {
  const landed = ladder.landedRung === undefined ? undefined : ladder.rungs[ladder.landedRung];
  return {
    id: ladder.id,
    status: STATUS[ladder.state],
    landedRung: ladder.landedRung,
    signature: landed?.signature ?? "",
    slot: ladder.slot,
    priceLanded: landed?.price,
    feePaidLamports: ladder.feePaid,
    slotsToLand: slotsToLand(ladder),
    rungs: ladder.rungs.map((rung) => ({
      signature: rung.signature,
      price: rung.price,
      state: RUNG[rung.state],
      submittedSlot: rung.submittedSlot,
    })),
    nonceAccount: ladder.nonceAccount,
    deadlineSlot: ladder.deadlineSlot,
    firstSlot: ladder.firstSlot,
    error: ladder.error && {
      code: ladder.error.code,
      message: ladder.error.message,
      instructionIndex: ladder.error.instructionIndex,
      customCode: ladder.error.customCode,
      raw: fromJson(ValueSchema, ladder.error.raw),
    },
    cheapestPriceInBlock: ladder.overpay?.cheapestPrice,
    cheapestFeeLamports: ladder.overpay?.cheapestFee,
    overpayRatio: ladder.overpay?.ratio,
    updatedAt: timestampFromDate(ladder.updatedAt),
  };
}

/** WatchLadder as a stream of response messages. */
export async function* watchLadderEvents(
  chains: ChainRegistry,
  req: WatchLadderRequest,
  signal: AbortSignal,
): AsyncGenerator<MessageInitShape<typeof WatchLadderResponseSchema>> {
  for await (const event of chains.resolve(req.chain).transactions.ladders.watch(req.id, signal)) {
    yield event.kind === "ladder"
      ? { event: { case: "ladder", value: toLadderRecord(event.ladder) } }
      : { event: { case: "heartbeat", value: { slot: event.slot } } };
  }
}

/** The handlers, to spread into TransactionService's implementation. */
export function ladderHandlers(deps: { chains: ChainRegistry }) {
  return {
    async prepareLadder(req: PrepareLadderRequest, ctx: HandlerContext) {
      const prepared = await deps.chains.resolve(req.chain).transactions.prepareLadder({
        wire: req.transaction,
        nonceAccount: req.nonceAccount,
        rungs: req.rungs,
        deadlineSlots: req.deadlineSlots,
        target: req.target,
        signal: ctx.signal,
      });
      return {
        rungs: prepared.rungs.map((rung) => ({
          transaction: rung.wire,
          price: rung.price,
          odds: rung.odds,
          sendAtSlot: rung.sendAtSlot,
          feeLamports: rung.fee,
        })),
        nonce: prepared.nonce,
        computeUnitLimit: prepared.computeUnitLimit,
        deadlineSlots: prepared.deadlineSlots,
        target: prepared.target,
        slot: prepared.slot,
      };
    },
    async sendLadder(req: SendLadderRequest) {
      const ladder = await deps.chains.resolve(req.chain).transactions.ladders.send({
        wires: req.transactions,
        deadlineSlots: req.deadlineSlots,
        target: req.target,
        skipPreflight: req.skipPreflight,
      });
      return { ladder: toLadderRecord(ladder) };
    },
    async getLadderStatus(req: GetLadderStatusRequest) {
      return { ladder: toLadderRecord(await deps.chains.resolve(req.chain).transactions.ladders.status(req.id)) };
    },
    watchLadder(req: WatchLadderRequest, ctx: HandlerContext) {
      return watchLadderEvents(deps.chains, req, ctx.signal);
    },
    async cancelLadder(req: CancelLadderRequest) {
      return { ladder: toLadderRecord(await deps.chains.resolve(req.chain).transactions.ladders.cancel(req.id)) };
    },
  };
}
