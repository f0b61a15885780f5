/**
 * blockSubscribe: one `blockNotification` per slot that becomes visible at the subscription's
 * commitment (confirmed or finalized; agave's `check_is_at_least_confirmed`), value
 * `{slot, block, err}` (agave's `RpcBlockUpdate`), the block encoded like getBlock with
 * blockSubscribe's defaults (base64, full details, no rewards). `{"mentionsAccountOrProgram": key}`
 * keeps only the transactions naming the key and skips slots without one. A v0 transaction the
 * subscription did not admit (`maxSupportedTransactionVersion`) gives
 * `{slot, block: null, err: {"UnsupportedTransactionVersion": 0}}` (agave retries the slot on its
 * next notification; here it is reported once).
 */
import {
  checkArity,
  decodeParams,
  expectBool,
  expectVariant,
  invalidType,
  optional,
  SerdeError,
  unknownVariant,
} from "../accounts/params.ts";
import type { Chain } from "../chain/chain.ts";
import { encodeBlock, TRANSACTION_DETAILS, type BlockEncodingOptions } from "../rpc/block-methods.ts";
import { checkEncodingForMaxVersion, TRANSACTION_ENCODINGS } from "../rpc/encode-transaction.ts";
import { assertAtLeastConfirmed } from "../rpc/params.ts";
import { JsonRpcError, type Commitment } from "../rpc/protocol.ts";
import { notify, slotsIn, withSlot, type Feed, type SubscriptionRef } from "./feed.ts";
import { commitmentOf, configObject, pubkeyParam } from "./pubsub-params.ts";

interface BlockSub extends SubscriptionRef {
  mentions: string | null;
  commitment: Commitment;
  options: BlockEncodingOptions;
}

const FILTER_VARIANTS = ["all", "mentionsAccountOrProgram"];

/** serde's externally tagged `RpcBlockSubscribeFilter`. */
function decodeFilter(value: unknown): string | null {
  if (typeof value === "string") {
    if (value === "all") return null;
    if (value === "mentionsAccountOrProgram") throw invalidType(value, "newtype variant");
    throw unknownVariant(value, FILTER_VARIANTS);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw invalidType(value, "string or map");
  const keys = Object.keys(value);
  if (keys.length !== 1) throw new SerdeError("invalid value: map, expected map with a single key");
  const variant = keys[0]!;
  const inner = (value as Record<string, unknown>)[variant];
  if (variant === "all") {
    if (inner !== null) throw invalidType(inner, "unit variant");
    return null;
  }
  if (variant !== "mentionsAccountOrProgram") throw unknownVariant(variant, FILTER_VARIANTS);
  if (typeof inner !== "string") throw invalidType(inner, "a string");
  return inner;
}

/** Creates the block feed over a chain. */
export function createBlockFeed({ chain }: { chain: Chain }): Feed {
  const subs = new Map<number, BlockSub>();

  const notifySlot = (sub: BlockSub, slot: bigint) => {
    const block = chain.block(slot);
    if (block === undefined) return;
    const transactions =
      sub.mentions === null
        ? block.transactions
        : block.transactions.filter((r) => r.keys.keys.includes(sub.mentions!));
    if (sub.mentions !== null && transactions.length === 0) return;
    let value: { slot: bigint; block: unknown; err: unknown };
    try {
      value = { slot, block: encodeBlock(block, transactions, sub.options), err: null };
    } catch (error) {
      if (!(error instanceof JsonRpcError)) throw error;
      value = { slot, block: null, err: { UnsupportedTransactionVersion: 0 } };
    }
    notify(sub, "blockNotification", withSlot(slot, value));
  };

  return {
    subscribe: {
      blockSubscribe(ref, params) {
        const request = decodeParams(() => {
          checkArity(params, 1, 2);
          const mentions = decodeFilter(params[0]);
          const config = configObject(params[1], "RpcBlockSubscribeConfig");
          const maxVersion = optional(config.maxSupportedTransactionVersion, (v) => {
            if (typeof v !== "number" || !Number.isInteger(v)) throw invalidType(v, "u8");
            if (v < 0 || v > 255) throw new SerdeError(`invalid value: integer \`${v}\`, expected u8`);
            return v;
          });
          return {
            mentions,
            commitment: commitmentOf(config),
            options: {
              encoding: optional(config.encoding, (v) => expectVariant(v, TRANSACTION_ENCODINGS)) ?? "base64",
              details: optional(config.transactionDetails, (v) => expectVariant(v, TRANSACTION_DETAILS)) ?? "full",
              rewards: optional(config.showRewards, expectBool) ?? false,
              maxVersion: maxVersion === undefined ? undefined : BigInt(maxVersion),
            } satisfies BlockEncodingOptions,
          };
        });
        checkEncodingForMaxVersion(request.options.encoding, request.options.maxVersion);
        assertAtLeastConfirmed(request.commitment);
        const mentions =
          request.mentions === null ? null : pubkeyParam(request.mentions, "mentions_account_or_program");
        subs.set(ref.id, { ...ref, mentions, commitment: request.commitment, options: request.options });
      },
    },
    remove: (id) => subs.delete(id),
    onTick(tick) {
      for (const sub of subs.values()) for (const slot of slotsIn(tick.visible[sub.commitment])) notifySlot(sub, slot);
    },
  };
}
