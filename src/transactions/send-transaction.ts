/**
 * SendTransaction's core: check a signed transaction without calling anyone, check its blockhash,
 * submit it once behind the node's own simulation (its preflight) and hand it to the status engine,
 * which rebroadcasts and follows it.
 * The same transaction sent again while Solgate still knows it joins the first send; it is never
 * submitted as a second execution.
 */
import type { Rpc, SendTransactionApi } from "@solana/kit";
import { isSolgateError } from "../errors.ts";
import { computeBudgetOf, transactionFeeLamports } from "../solana/compute-budget.ts";
import { assertSignaturesValid, decodeWireTransaction, staticWritableAccounts } from "../solana/wire-transaction.ts";
import type { DecodedTransaction } from "../solana/wire-transaction.ts";
import type { BlockhashCache } from "./blockhash-cache.ts";
import { sendWire } from "./chain-calls.ts";
import { AUTO_PRIORITY_FEE, priceOfChoice } from "./priority-fee.ts";
import type { PriorityFeeChoice, PriorityFeePricer } from "./priority-fee.ts";
import { publicRecord } from "./tracked-send.ts";
import type { StatusEngine } from "./status-engine.ts";
import type { TrackedSend } from "./transaction-store.ts";
import type { StatusRecord } from "./transaction-status.ts";

/** A send request, already decoded from the transport. */
export interface SendRequest {
  /** The signed wire transaction, never changed. */
  readonly wire: Uint8Array;
  readonly priorityFee?: PriorityFeeChoice;
  /** Wait for confirmation (default true). */
  readonly confirm?: boolean;
  /** Skip Solgate's simulation (default false). */
  readonly skipPreflight?: boolean;
  /** The request's signal: a client that goes away stops the wait (the send itself goes on). */
  readonly signal?: AbortSignal;
  /**
   * A durable-nonce transaction (a fee ladder's rung): its "blockhash" is a nonce value that never lapses by
   * height, so no lifetime is looked up and the send never expires by blockhash. It is rebroadcast until its
   * caller ends it (`Transactions.forget`), which the ladder does once the nonce has moved or its climb is over.
   */
  readonly durableNonce?: boolean;
}

/** What a send did. */
export interface SendOutcome extends StatusRecord {
  /** The compute-unit price the transaction carries (0 when it sets none). */
  readonly computeUnitPrice: bigint;
  /** The price of the level asked for, when the fee market knows it. */
  readonly requestedComputeUnitPrice?: bigint;
  /** The last block height at which the blockhash is valid; undefined when the node could not say. */
  readonly lastValidBlockHeight?: bigint;
}

/** Options of {@link createSender}. */
export interface SenderOptions {
  rpc: Rpc<SendTransactionApi>;
  engine: StatusEngine;
  blockhashes: BlockhashCache;
  /** The fee market; without it `requestedComputeUnitPrice` is left unset for named levels. */
  fees?: PriorityFeePricer;
  /** The commitment blockhashes are checked at and first submissions simulated (default `confirmed`). */
  commitment?: "processed" | "confirmed";
  /** Longest wait for confirmation before answering with the status as it stands (default 90 s). */
  confirmTimeoutMs?: number;
  now?: () => number;
}

/** Sends transactions. */
export interface Sender {
  send(request: SendRequest): Promise<SendOutcome>;
}

const PRECOMPILES = new Set([
  "Ed25519SigVerify111111111111111111111111111",
  "KeccakSecp256k11111111111111111111111111111",
  "Secp256r1SigVerify1111111111111111111111111",
]);

/** The fee the chain will charge, or undefined when precompile signatures make only the node's word exact. */
export function expectedFeeOf(tx: DecodedTransaction): bigint | undefined {
  const { staticAccounts, instructions } = tx.message;
  if (instructions.some((ix) => PRECOMPILES.has(String(staticAccounts[ix.programAddressIndex])))) return undefined;
  return transactionFeeLamports(tx.signatures.length, computeBudgetOf(tx.message));
}

/** Creates the sender. */
export function createSender(options: SenderOptions): Sender {
  const { rpc, engine, blockhashes, fees } = options;
  const now = options.now ?? Date.now;
  const commitment = options.commitment ?? "confirmed";
  // Admissions under way, so that a concurrent duplicate joins instead of racing.
  const admitting = new Map<string, Promise<TrackedSend>>();

  async function admit(tx: DecodedTransaction, skipPreflight: boolean, durableNonce: boolean): Promise<TrackedSend> {
    if (durableNonce) return admitDurable(tx, skipPreflight);
    // Usually known without a call (a blockhash seen through getLatestBlockhash, a recent block height).
    const known = blockhashes.cached(tx.blockhash);
    // Otherwise only the node can say. Its preflight checks the blockhash anyway, so the lookup runs
    // alongside the submission: one round trip before the node has the transaction, not two. Without a
    // preflight the node would take a lapsed blockhash silently, so then the lookup comes first.
    const lookup = known === undefined ? blockhashes.check(tx.blockhash) : Promise.resolve(known);
    lookup.catch(() => {}); // awaited below; keep an early rejection from going unhandled
    const validity = known ?? (skipPreflight ? await lookup : undefined);
    const expectedFee = expectedFeeOf(tx);
    const send: TrackedSend = {
      signature: tx.signature,
      state: "submitted",
      updatedAt: new Date(now()),
      // A copy: the request's bytes may be a view into a larger buffer.
      wire: tx.wire.slice(),
      blockhash: tx.blockhash,
      ...(validity === undefined ? {} : { lastValidBlockHeight: validity.lastValidBlockHeight }),
      expiryExact: validity?.exact ?? false,
      commitment: validity?.commitment ?? commitment,
      ...(expectedFee === undefined ? {} : { expectedFee }),
      landed: false,
      lastBroadcastAt: now(),
      broadcasts: 1,
    };
    // Tracked before the first submission, so that a full store refuses before anything is sent. Another
    // replica may have taken the same transaction meanwhile: then this is a duplicate, and joins it.
    const existing = await engine.track(send);
    if (existing !== undefined) return existing;
    let sentAt = send.commitment;
    try {
      // The node simulates first (unless the client said not to) at the blockhash's commitment: a
      // failing transaction is refused with its logs, unsent and without a fee.
      const submit = (at: "processed" | "confirmed") =>
        sendWire(rpc, tx.wire, { commitment: at, blockhash: tx.blockhash, preflight: !skipPreflight });
      let sent: Awaited<ReturnType<typeof submit>>;
      try {
        sent = await submit(sentAt);
      } catch (error) {
        // A blockhash so fresh that only the processed bank knows it is still valid: submit there.
        if (validity !== undefined || !(isSolgateError(error) && error.reason === "BLOCKHASH_EXPIRED")) throw error;
        if (sentAt === "processed") throw error;
        // The lookup beside it says which: lapsed, or known to the confirmed bank (then too old for its
        // preflight), and the refusal stands. When the lookup failed, the processed bank's preflight decides
        // rather than a guess: a blockhash just read at processed is not called expired for an upstream hiccup.
        const learnt = await lookup.then(
          (found) => found.commitment,
          (e: unknown) => (isSolgateError(e) && e.reason === "BLOCKHASH_EXPIRED" ? "lapsed" : "unknown"),
        );
        if (learnt !== "processed" && learnt !== "unknown") throw error;
        sentAt = "processed";
        sent = await submit(sentAt);
      }
      if (sent === "already-processed") await engine.noteLanded(tx.signature);
      else fees?.trackSend?.(tx.wire);
    } catch (error) {
      // Nothing is tracked for a send that failed, so that the client may simply retry it; unless another replica
      // found it tracked meanwhile and told its client `submitted`: then it stays, is rebroadcast, and this answer
      // agrees with that one.
      if (await engine.forget(tx.signature)) throw error;
      return send;
    }
    if (validity !== undefined) return send;
    // The lifetime learnt alongside. Should the node not say (a failing upstream, or a blockhash that
    // lapsed between the two calls), expiry rests on isBlockhashValid, as for any inexact lifetime.
    const learnt = await lookup.catch(() => undefined);
    const lifetime = {
      ...(learnt === undefined ? {} : { lastValidBlockHeight: learnt.lastValidBlockHeight }),
      expiryExact: learnt?.exact ?? false,
      commitment: sentAt,
    };
    await engine.noteLifetime(tx.signature, lifetime);
    return { ...send, ...lifetime };
  }

  /** A durable-nonce send: no lifetime to learn (an exact "never"), submitted once at the configured commitment. */
  async function admitDurable(tx: DecodedTransaction, skipPreflight: boolean): Promise<TrackedSend> {
    const expectedFee = expectedFeeOf(tx);
    const send: TrackedSend = {
      signature: tx.signature,
      state: "submitted",
      updatedAt: new Date(now()),
      wire: tx.wire.slice(),
      blockhash: tx.blockhash,
      expiryExact: true,
      commitment,
      ...(expectedFee === undefined ? {} : { expectedFee }),
      landed: false,
      lastBroadcastAt: now(),
      broadcasts: 1,
    };
    const existing = await engine.track(send);
    if (existing !== undefined) return existing;
    try {
      const sent = await sendWire(rpc, tx.wire, { commitment, blockhash: tx.blockhash, preflight: !skipPreflight });
      if (sent === "already-processed") await engine.noteLanded(tx.signature);
      else fees?.trackSend?.(tx.wire);
    } catch (error) {
      if (await engine.forget(tx.signature)) throw error; // as in admit: kept when another replica answered for it
    }
    return send;
  }

  return {
    async send(request) {
      const tx = decodeWireTransaction(request.wire);
      assertSignaturesValid(tx);
      const budget = computeBudgetOf(tx.message);
      const requested = priceOfChoice(
        request.priorityFee ?? AUTO_PRIORITY_FEE,
        fees,
        staticWritableAccounts(tx.message),
      );

      // A duplicate joins an admission under way (whose first submission may yet fail), else the tracked send.
      let tracked = await (admitting.get(tx.signature) ?? engine.tracked(tx.signature));
      if (tracked === undefined) {
        // Looked up again: another request may have started admitting it while the store answered.
        let admission = admitting.get(tx.signature);
        if (admission === undefined) {
          admission = admit(tx, request.skipPreflight ?? false, request.durableNonce ?? false).finally(() =>
            admitting.delete(tx.signature),
          );
          admitting.set(tx.signature, admission);
        }
        tracked = await admission;
      }
      // Without confirmation the answer is the send as taken: `submitted` for a new one (the spec's answer,
      // even when the chain has moved on by the time it is written), the record as it was for a duplicate.
      const record =
        request.confirm === false
          ? publicRecord(tracked)
          : await engine.settle(tx.signature, { signal: request.signal, timeoutMs: options.confirmTimeoutMs });
      return {
        ...record,
        computeUnitPrice: budget.unitPrice,
        ...(requested === undefined ? {} : { requestedComputeUnitPrice: requested }),
        ...(tracked.lastValidBlockHeight === undefined ? {} : { lastValidBlockHeight: tracked.lastValidBlockHeight }),
      };
    },
  };
}
