/**
 * getSignaturesForAddress over the localnet's own transaction history, as agave 3.0 answers it:
 * newest first, `before` / `until` by signature (exclusive), `limit` 1-1,000, commitment confirmed
 * or finalized, `minContextSlot`, and agave's wording for every refusal.
 */
import bs58 from "bs58";
import type { Chain } from "../chain/chain.ts";
import { decodeMemos } from "./memo.ts";
import {
  base58Key,
  base58Signature,
  checkMinContextSlot,
  commitmentField,
  configParam,
  expectArity,
  stringField,
  u64Field,
} from "./params.ts";
import { invalidParams, type MethodTable } from "./protocol.ts";

/** agave's MAX_GET_CONFIRMED_SIGNATURES_FOR_ADDRESS2_LIMIT. */
const MAX_LIMIT = 1000n;

const decode58 = (text: string): Uint8Array | null => {
  try {
    return bs58.decode(text);
  } catch {
    return null;
  }
};

/** Creates the signature method table. */
export function createSignatureMethods({ chain }: { chain: Chain }): MethodTable {
  return {
    getSignaturesForAddress(params, ctx) {
      expectArity(params, 1, 2);
      const address = base58Key(params[0], decode58);
      const config = configParam(params[1]);
      const before = stringField(config, "before");
      const until = stringField(config, "until");
      if (before !== undefined) base58Signature(before, decode58);
      if (until !== undefined) base58Signature(until, decode58);
      const limit = u64Field(config, "limit") ?? MAX_LIMIT;
      if (limit === 0n || limit > MAX_LIMIT) throw invalidParams(`Invalid limit; max ${MAX_LIMIT}`);
      const commitment = commitmentField(config);
      if (commitment === "processed") throw invalidParams("Method does not support commitment below `confirmed`");
      const finalized = ctx.slotAt("finalized");
      const highest = commitment === "confirmed" ? ctx.slotAt("confirmed") : finalized;
      checkMinContextSlot(highest, u64Field(config, "minContextSlot"));

      const entries = chain.addressSignatures.newestFirst(address).filter((e) => e.slot <= highest);
      // agave's blockstore: `before` starts after that signature (from its slot), `until` stops at it;
      // a signature it does not know bounds nothing.
      let start = 0;
      if (before !== undefined) {
        const at = entries.findIndex((e) => e.signature === before);
        const beforeStatus = chain.signatureStatus(before);
        if (at >= 0) start = at + 1;
        else if (beforeStatus !== undefined) {
          start = entries.findIndex(
            (e) => e.slot < beforeStatus.slot || (e.slot === beforeStatus.slot && e.index < beforeStatus.index),
          );
          if (start < 0) start = entries.length;
        }
      }
      const out: unknown[] = [];
      for (let i = start; i < entries.length && BigInt(out.length) < limit; i++) {
        const entry = entries[i]!;
        if (entry.signature === until) break;
        const record = chain.transaction(entry.signature);
        const block = chain.block(entry.slot);
        out.push({
          blockTime: block?.blockTime ?? null,
          confirmationStatus: entry.slot <= finalized ? "finalized" : "confirmed",
          err: chain.signatureStatus(entry.signature)?.err ?? record?.outcome.err ?? null,
          memo: record === undefined ? null : decodeMemos(record),
          signature: entry.signature,
          slot: entry.slot,
          // agave 4.4: the transaction's index in its block (RpcConfirmedTransactionStatusWithSignature).
          transactionIndex: entry.index,
        });
      }
      return out;
    },
  };
}
