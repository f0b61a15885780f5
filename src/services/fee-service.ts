/** FeeService: GetFees, EstimateFees and WatchFees, request to fee-market call to response. */
import type { ServiceImpl } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import {
  type FeeService,
  GetFeesResponseSchema,
  WatchFeesResponseSchema,
} from "../../gen/solgate/v1/fee_service_pb.js";
import type { GetFeesResponse, WatchFeesRequest, WatchFeesResponse } from "../../gen/solgate/v1/fee_service_pb.js";
import { FeeEstimateSchema, FeeSource, OddsAnswerSchema, TipSource } from "../../gen/solgate/v1/fee_pb.js";
import type { FeeEstimate as FeeEstimateMessage } from "../../gen/solgate/v1/fee_pb.js";
import type { ChainRegistry } from "../chains.ts";
import type { FeeEstimate, FeeFeedEvent } from "../fees/fee-market.ts";
import { answerOdds, asksOdds } from "../fees/fee-estimate.ts";
import { shareResponse } from "./shared-response.ts";

const TIP_SOURCES = { blockEngine: TipSource.BLOCK_ENGINE, blocks: TipSource.BLOCKS } as const;

const SOURCES = {
  blocks: FeeSource.BLOCKS,
  recentPrioritizationFees: FeeSource.RECENT_PRIORITIZATION_FEES,
  none: FeeSource.NONE,
} as const;

// The global estimate object only changes when the window moves: convert it once, not per request, into
// one shared response that transports may encode once (see shared-response.ts).
const converted = new WeakMap<FeeEstimate, GetFeesResponse>();

// A feed event is one object shared by every watch: convert it once into one shared message, which the
// lean gRPC path and the SSE route encode once for all their streams.
const convertedEvents = new WeakMap<FeeFeedEvent, WatchFeesResponse>();

function toWatchFeesResponse(event: FeeFeedEvent): WatchFeesResponse {
  let response = convertedEvents.get(event);
  if (response === undefined) {
    response = shareResponse(
      create(WatchFeesResponseSchema, {
        event:
          event.kind === "estimate"
            ? { case: "estimate", value: toFeeEstimateMessage(event.estimate) }
            : { case: "heartbeat", value: { slot: event.slot } },
      }),
    );
    convertedEvents.set(event, response);
  }
  return response;
}

/**
 * WatchFees as a stream of response messages: the router's handler and the lean gRPC stream path
 * (src/server/grpc-stream-path.ts) both serve this.
 */
export async function* watchFeesEvents(
  chains: ChainRegistry,
  req: WatchFeesRequest,
  signal: AbortSignal,
): AsyncGenerator<WatchFeesResponse> {
  for await (const event of chains.resolve(req.chain).fees.watch(signal)) yield toWatchFeesResponse(event);
}

/** The Connect implementation of FeeService. */
export function createFeeServiceImpl(deps: { chains: ChainRegistry }): ServiceImpl<typeof FeeService> {
  return {
    getFees(req) {
      const estimate = deps.chains.resolve(req.chain).fees.global();
      let response = converted.get(estimate);
      if (response === undefined) {
        response = shareResponse(create(GetFeesResponseSchema, { estimate: toFeeEstimateMessage(estimate) }));
        converted.set(estimate, response);
      }
      return response;
    },

    async estimateFees(req) {
      const fees = deps.chains.resolve(req.chain).fees;
      const questions = { price: req.oddsPrice, target: req.targetOdds, curvePoints: req.curvePoints };
      const [estimate, odds] = await Promise.all([
        fees.forTransaction(req.transaction),
        asksOdds(questions) || req.withinSlots !== undefined
          ? fees
              .oddsForTransaction(req.transaction, req.withinSlots)
              .then((at) => answerOdds(at, req.withinSlots ?? fees.odds.withinSlots, questions))
          : undefined,
      ]);
      const message = toFeeEstimateMessage(estimate);
      if (odds !== undefined)
        message.oddsAnswer = create(OddsAnswerSchema, {
          withinSlots: odds.withinSlots,
          priceOdds: odds.priceOdds,
          cheapestPrice: odds.cheapest?.price,
          cheapestPriceOdds: odds.cheapest?.odds,
          curve: odds.curve.map((point) => ({ price: point.price, odds: point.odds })),
        });
      return { estimate: message };
    },

    watchFees(req, ctx) {
      return watchFeesEvents(deps.chains, req, ctx.signal);
    },
  };
}

/** A fee-market estimate as the contract's FeeEstimate message (also used by PrepareTransaction). */
export function toFeeEstimateMessage(estimate: FeeEstimate): FeeEstimateMessage {
  const { priority, baseFee, tips } = estimate;
  return create(FeeEstimateSchema, {
    priority: priority && {
      low: priority.low,
      medium: priority.medium,
      high: priority.high,
      veryHigh: priority.veryHigh,
      recommended: priority.recommended,
      unit: priority.unit,
      odds: priority.odds && {
        withinSlots: priority.odds.withinSlots,
        low: priority.odds.low,
        medium: priority.odds.medium,
        high: priority.odds.high,
        veryHigh: priority.odds.veryHigh,
        recommended: priority.odds.recommended,
      },
    },
    baseFee: {
      lamportsPerSignature: baseFee.lamportsPerSignature,
      signatures: BigInt(baseFee.signatures),
      lamports: baseFee.lamports,
    },
    updatedAt: estimate.updatedAt && timestampFromMs(estimate.updatedAt.getTime()),
    source: SOURCES[estimate.source],
    slot: estimate.slot,
    windowSlots: BigInt(estimate.windowSlots),
    sampleSize: BigInt(estimate.sampleSize),
    writableAccounts: [...estimate.writableAccounts],
    tips: tips && {
      p25: tips.p25,
      p50: tips.p50,
      p75: tips.p75,
      p95: tips.p95,
      p99: tips.p99,
      source: TIP_SOURCES[tips.source],
      sampleSize: BigInt(tips.sampleSize),
      updatedAt: timestampFromMs(tips.updatedAt.getTime()),
    },
  });
}
