/**
 * Subscribe params decoded as agave's `rpc_pubsub.rs` does: serde for the config (the HTTP side's
 * decoders and their "Invalid params: ..." wording), then `param::<T>` for keys and signatures,
 * whose failure reads "Invalid Request: Invalid <thing> provided" (-32602).
 */
import { parsePubkey, isParsedPubkey } from "../accounts/base58.ts";
import { expectObject, expectUnsigned, expectVariant, optional } from "../accounts/params.ts";
import bs58 from "bs58";
import { invalidParams, type Commitment } from "../rpc/protocol.ts";

const COMMITMENTS: readonly Commitment[] = ["processed", "confirmed", "finalized"];

/** agave's `param::<Pubkey>(text, thing)`. */
export function pubkeyParam(text: string, thing: string): string {
  const parsed = parsePubkey(text);
  if (!isParsedPubkey(parsed)) throw invalidParams(`Invalid Request: Invalid ${thing} provided`);
  return parsed.address;
}

/** agave's `param::<Signature>(text, "signature")`. */
export function signatureParam(text: string): string {
  let bytes: Uint8Array | null = null;
  if (text.length <= 88) {
    try {
      bytes = bs58.decode(text);
    } catch {
      bytes = null;
    }
  }
  if (bytes === null || bytes.length !== 64) throw invalidParams("Invalid Request: Invalid signature provided");
  return text;
}

/** An optional config object; absent or null means defaults. */
export function configObject(value: unknown, structName: string): Record<string, unknown> {
  return optional(value, (v) => expectObject(v, structName)) ?? {};
}

/** The flattened `commitment` of a config (default finalized, as `CommitmentConfig::default()`). */
export function commitmentOf(config: Record<string, unknown>): Commitment {
  return optional(config.commitment, (v) => expectVariant(v, COMMITMENTS)) ?? "finalized";
}

/** A subscription id param of `xUnsubscribe` (a u64). */
export function subscriptionIdParam(value: unknown): number {
  return expectUnsigned(value, "u64");
}
