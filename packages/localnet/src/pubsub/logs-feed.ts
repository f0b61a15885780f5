/**
 * logsSubscribe: one `logsNotification` per transaction of each slot that becomes visible at the
 * subscription's commitment, `{signature, err, logs}` (agave's `RpcLogsResponse`), filtered as
 * agave's `RpcTransactionLogsFilter`: `"all"` (no votes: the localnet has none), `"allWithVotes"`,
 * or `{"mentions": [address]}` (exactly one address, any account key of the transaction).
 */
import { checkArity, decodeParams, expectString, invalidType, SerdeError, unknownVariant } from "../accounts/params.ts";
import type { Chain } from "../chain/chain.ts";
import type { Commitment } from "../rpc/protocol.ts";
import { invalidParams } from "../rpc/protocol.ts";
import { notify, slotsIn, withSlot, type Feed, type SubscriptionRef } from "./feed.ts";
import { commitmentOf, configObject, pubkeyParam } from "./pubsub-params.ts";

interface LogsSub extends SubscriptionRef {
  /** null: every transaction. */
  mentions: string | null;
  commitment: Commitment;
}

const FILTER_VARIANTS = ["all", "allWithVotes", "mentions"];

/** serde's externally tagged `RpcTransactionLogsFilter`. */
function decodeFilter(value: unknown): { kind: "all" } | { kind: "mentions"; keys: string[] } {
  if (typeof value === "string") {
    if (value === "all" || value === "allWithVotes") return { kind: "all" };
    if (value === "mentions") throw invalidType(value, "newtype variant");
    throw unknownVariant(value, FILTER_VARIANTS);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw invalidType(value, "string or map");
  const keys = Object.keys(value);
  if (keys.length !== 1) throw new SerdeError("invalid value: map, expected map with a single key");
  const variant = keys[0]!;
  const inner = (value as Record<string, unknown>)[variant];
  if (variant !== "mentions") {
    if (!FILTER_VARIANTS.includes(variant)) throw unknownVariant(variant, FILTER_VARIANTS);
    if (inner !== null) throw invalidType(inner, "unit variant");
    return { kind: "all" };
  }
  if (!Array.isArray(inner)) throw invalidType(inner, "a sequence");
  return { kind: "mentions", keys: inner.map(expectString) };
}

/** Creates the logs feed over a chain. */
export function createLogsFeed({ chain }: { chain: Chain }): Feed {
  const subs = new Map<number, LogsSub>();
  return {
    subscribe: {
      logsSubscribe(ref, params) {
        const request = decodeParams(() => {
          checkArity(params, 1, 2);
          return {
            filter: decodeFilter(params[0]),
            commitment: commitmentOf(configObject(params[1], "RpcTransactionLogsConfig")),
          };
        });
        let mentions: string | null = null;
        if (request.filter.kind === "mentions") {
          if (request.filter.keys.length !== 1) throw invalidParams("Invalid Request: Only 1 address supported");
          mentions = pubkeyParam(request.filter.keys[0]!, "mentions");
        }
        subs.set(ref.id, { ...ref, mentions, commitment: request.commitment });
      },
    },
    remove: (id) => subs.delete(id),
    onTick(tick) {
      for (const sub of subs.values()) {
        for (const slot of slotsIn(tick.visible[sub.commitment])) {
          const block = chain.block(slot);
          if (block === undefined) continue;
          for (const record of block.transactions) {
            if (sub.mentions !== null && !record.keys.keys.includes(sub.mentions)) continue;
            // agave collects logs of executed transactions only: a fees-only one never ran.
            if (record.outcome.feesOnly) continue;
            const value = { signature: record.signature, err: record.outcome.err, logs: record.outcome.logs };
            notify(sub, "logsNotification", withSlot(slot, value));
          }
        }
      }
    },
  };
}
