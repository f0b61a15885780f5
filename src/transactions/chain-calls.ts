/**
 * The upstream calls that carry a transaction (simulate, send) and the reading of what comes back:
 * which failures are the client's (invalid transaction, failed simulation, lapsed blockhash), which
 * count as success (a node's "already processed"), and which are the upstream's (passed on as thrown).
 */
import type { Base64EncodedWireTransaction, Rpc, SendTransactionApi, SimulateTransactionApi } from "@solana/kit";
import { SolgateError, isSolgateError } from "../errors.ts";
import { nodeErrorOf } from "../upstream/node-errors.ts";
import { blockhashExpired } from "./blockhash-cache.ts";
import { describeTransactionError } from "./transaction-error.ts";

const LOGS_IN_DETAILS = 50;

/** What a simulation said. */
export interface SimulationOutcome {
  /** The node's `TransactionError`, or null when the simulation succeeded. */
  readonly err: unknown;
  readonly logs: readonly string[];
  readonly unitsConsumed: bigint | undefined;
  /** The bytes of account data the transaction loaded, where the node says (agave 2.1 and later). */
  readonly loadedAccountsDataSize?: number;
}

/** The wire bytes as kit's RPC methods take them. */
export function toBase64Wire(wire: Uint8Array): Base64EncodedWireTransaction {
  return Buffer.from(wire.buffer, wire.byteOffset, wire.byteLength).toString("base64") as Base64EncodedWireTransaction;
}

/** Whether `e` is a node saying the transaction was already processed (success for a resend). */
export function isAlreadyProcessedError(e: unknown): boolean {
  return nodeErrorOf(e)?.kind === "already-processed";
}

/** Turns a node's refusal of the transaction itself into INVALID_TRANSACTION; other errors pass unchanged. */
function refusalOf(e: unknown, blockhash: string): unknown {
  if (isSolgateError(e)) return e;
  const error = nodeErrorOf(e);
  if (error?.kind === "blockhash-not-found") return blockhashExpired(blockhash);
  if (error?.kind === "transaction-rejected" || error?.kind === "invalid-params") {
    return new SolgateError("INVALID_TRANSACTION", `the node refused the transaction: ${error.message}`, {
      rpcCode: error.code,
    });
  }
  return e;
}

/** The SIMULATION_FAILED error for a failed simulation: the program logs, the error and the units consumed. */
export function simulationFailed(outcome: SimulationOutcome): SolgateError {
  const error = describeTransactionError(outcome.err);
  const logs = outcome.logs.slice(-LOGS_IN_DETAILS);
  return new SolgateError("SIMULATION_FAILED", `simulation failed: ${error.message}`, {
    error: error.raw,
    errorCode: error.code,
    ...(error.instructionIndex === undefined ? {} : { instructionIndex: error.instructionIndex }),
    ...(error.customCode === undefined ? {} : { customCode: error.customCode }),
    logs,
    unitsConsumed: outcome.unitsConsumed,
  });
}

/**
 * Simulates wire bytes at `commitment`. For signed transactions signatures are not re-verified (the
 * caller has done it); drafts are simulated with `replaceRecentBlockhash`.
 */
export async function simulateWire(
  rpc: Rpc<SimulateTransactionApi>,
  wire: Uint8Array,
  options: { commitment: "processed" | "confirmed"; draft: boolean; blockhash: string; signal?: AbortSignal },
): Promise<SimulationOutcome> {
  try {
    const { value } = await rpc
      .simulateTransaction(toBase64Wire(wire), {
        encoding: "base64",
        commitment: options.commitment,
        sigVerify: false,
        replaceRecentBlockhash: options.draft,
      })
      .send({ abortSignal: options.signal });
    return {
      err: value.err ?? null,
      logs: value.logs ?? [],
      unitsConsumed: value.unitsConsumed,
      ...(value.loadedAccountsDataSize === undefined ? {} : { loadedAccountsDataSize: value.loadedAccountsDataSize }),
    };
  } catch (e) {
    throw refusalOf(e, options.blockhash);
  }
}

/**
 * Sends wire bytes once, with `maxRetries: 0` (Solgate rebroadcasts itself). With `preflight` (a
 * client's first submission) the node simulates the transaction before it forwards it, at the
 * blockhash's commitment, and refuses a failing one: Solgate's simulation and its submission in one
 * round trip, a failure read back as SIMULATION_FAILED with the node's logs. Without it (rebroadcasts,
 * and clients that asked to skip simulation) `skipPreflight: true`: a rebroadcast of a transaction that
 * has meanwhile landed would fail a preflight with AlreadyProcessed.
 * Resolves to whether the node said it had already processed the transaction (a success).
 * @throws SolgateError SIMULATION_FAILED / BLOCKHASH_EXPIRED / INVALID_TRANSACTION for refusals; upstream errors as they are.
 */
export async function sendWire(
  rpc: Rpc<SendTransactionApi>,
  wire: Uint8Array,
  options: { commitment: "processed" | "confirmed"; blockhash: string; preflight?: boolean },
): Promise<"sent" | "already-processed"> {
  try {
    await rpc
      .sendTransaction(toBase64Wire(wire), {
        encoding: "base64",
        skipPreflight: !(options.preflight ?? false),
        preflightCommitment: options.commitment,
        maxRetries: 0n,
      })
      .send();
    return "sent";
  } catch (e) {
    const error = nodeErrorOf(e);
    if (error?.kind === "already-processed") return "already-processed";
    if (error?.kind === "preflight-failed") {
      // The node's simulation said no (a preflight, or a node that ignores skipPreflight). Nothing was sent.
      throw simulationFailed({ err: error.err, logs: error.logs, unitsConsumed: error.unitsConsumed });
    }
    throw refusalOf(e, options.blockhash);
  }
}
