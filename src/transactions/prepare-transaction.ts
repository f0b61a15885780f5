/**
 * PrepareTransaction's core: readies an unsigned draft for signing. The draft is decompiled with kit
 * (loading its lookup tables through the upstream), given a compute-unit limit measured by a
 * simulation plus a margin, a loaded-accounts data-size limit from the same simulation plus a margin,
 * a compute-unit price from the fee market, a fresh blockhash, and compiled again with empty
 * signatures. Compute-budget instructions the draft already has are kept unless the caller asks for
 * them to be replaced; a draft that sets its own compute-unit limit is not simulated, and gets no
 * loaded-accounts limit it did not ask for.
 */
import {
  compileTransaction,
  decompileTransactionMessage,
  getTransactionEncoder,
  getTransactionMessageComputeUnitLimit,
  getTransactionMessageComputeUnitPrice,
  getTransactionMessageLoadedAccountsDataSizeLimit,
  isSolanaError,
  isTransactionMessageWithDurableNonceLifetime,
  isWritableRole,
  setTransactionMessageComputeUnitLimit,
  setTransactionMessageComputeUnitPrice,
  setTransactionMessageLifetimeUsingBlockhash,
  setTransactionMessageLoadedAccountsDataSizeLimit,
  setTransactionMessageLifetimeUsingDurableNonce,
} from "@solana/kit";
import type {
  Address,
  AddressesByLookupTableAddress,
  Blockhash,
  GetMultipleAccountsApi,
  Nonce,
  Rpc,
  SimulateTransactionApi,
  TransactionMessage,
  TransactionMessageWithFeePayer,
  TransactionMessageWithLifetime,
} from "@solana/kit";
import { SolgateError, isSolgateError } from "../errors.ts";
import { createLookupTableResolver } from "../solana/lookup-tables.ts";
import type { FeeEstimate } from "../fees/fee-market.ts";
import { DEFAULT_LOADED_ACCOUNTS_BYTES, LOADED_ACCOUNTS_PAGE_BYTES } from "../fees/transaction-cost.ts";
import { MAX_COMPUTE_UNITS, computeBudgetOf, transactionFeeLamports } from "../solana/compute-budget.ts";
import { MAX_TRANSACTION_BYTES, decodeWireTransaction } from "../solana/wire-transaction.ts";
import type { BlockhashCache } from "./blockhash-cache.ts";
import { simulateWire, simulationFailed } from "./chain-calls.ts";
import { AUTO_PRIORITY_FEE, priceOfChoice } from "./priority-fee.ts";
import { DEFAULT_TIP_MAX_LAMPORTS, resolveTip, withTipTransfer } from "./prepare-tip.ts";
import type { PreparedTip, PrepareTipSource, TipChoice } from "./prepare-tip.ts";
import type { PriorityFeeChoice, PriorityFeePricer } from "./priority-fee.ts";

/** What the fee market offers PrepareTransaction (the fee engine's `FeeMarket` satisfies it). */
export interface PrepareFeeSource extends PriorityFeePricer {
  forAccounts(writable: readonly string[], signatures?: number): FeeEstimate;
}

/** A prepare request, already decoded from the transport. */
export interface PrepareRequest {
  /** The draft in wire format; signatures are ignored. */
  readonly wire: Uint8Array;
  readonly priorityFee?: PriorityFeeChoice;
  /** Replace compute-budget instructions the draft has (default: keep them). */
  readonly replaceComputeBudget?: boolean;
  /** A Jito tip to add (prepare-tip.ts); none when undefined. */
  readonly tip?: TipChoice;
  /**
   * A durable nonce to use as the lifetime (a fee ladder's rungs): AdvanceNonceAccount goes first, and the nonce's
   * value is the blockhash. The caller has read and checked the nonce account.
   */
  readonly durableNonce?: { readonly nonceAccount: string; readonly authority: string; readonly nonce: string };
  readonly signal?: AbortSignal;
}

/** The draft, ready to sign. */
export interface PrepareOutcome {
  /** Wire bytes with zeroed signatures. */
  readonly wire: Uint8Array;
  readonly blockhash: string;
  /** The blockhash's last valid block height (0 for a durable-nonce draft, which has none). */
  readonly lastValidBlockHeight: bigint;
  readonly computeUnitLimit: number;
  readonly computeUnitPrice: bigint;
  /** The SetLoadedAccountsDataSizeLimit the transaction carries, in bytes; undefined when it sets none. */
  readonly loadedAccountsDataSizeLimit: number | undefined;
  /** The fee-market estimate the price came from; undefined without a fee market. */
  readonly estimate: FeeEstimate | undefined;
  /** Base fee plus ceil(price * limit / 1e6), in lamports. */
  readonly expectedFee: bigint;
  /** The tip added, when one was asked for. */
  readonly tip?: PreparedTip;
}

/** Options of {@link createPreparer}. */
export interface PreparerOptions {
  rpc: Rpc<SimulateTransactionApi & GetMultipleAccountsApi>;
  blockhashes: BlockhashCache;
  fees?: PrepareFeeSource;
  /** Commitment of simulations and lookup-table reads (default `confirmed`). */
  commitment?: "processed" | "confirmed";
  /** Margin on simulated units: `units + ceil(units * percent / 100) + marginUnits` (defaults 10 % and 1,000). */
  marginPercent?: number;
  marginUnits?: number;
  /** How old a fetched blockhash may be to be handed out again (default 1 s). */
  blockhashMaxAgeMs?: number;
  /** Tip accounts and levels (the chain's block engine); none: tips are refused with TIPS_UNAVAILABLE. */
  tips?: PrepareTipSource;
  /** The ceiling on a tip, in lamports (default {@link DEFAULT_TIP_MAX_LAMPORTS}). */
  tipMaxLamports?: bigint;
}

/** Prepares drafts. */
export interface Preparer {
  prepare(request: PrepareRequest): Promise<PrepareOutcome>;
}

type Draft = TransactionMessage & TransactionMessageWithFeePayer & TransactionMessageWithLifetime;

/**
 * The loaded-accounts data-size limit for a transaction that loaded `bytes` in simulation: twice that plus 64 KiB,
 * rounded up to agave's 32 KiB cost page; undefined when that reaches the 64 MiB default (nothing to save) or the
 * node did not say (`bytes` 0 or absent).
 *
 * Why set it: agave's cost model charges the *requested* size, 8 CU per 32 KiB, and with no request that is 64 MiB,
 * 16,384 CU, about 8% of a 200,000-CU transaction's cost; the scheduler's priority is reward / cost, so the same fee
 * buys more priority. Why the wide margin: a transaction that loads more than its limit fails at load, and still pays
 * its fee (SIMD-0191; with a durable nonce, the nonce advances too); the margin costs 8 CU a page, a few dozen CU.
 */
export function loadedAccountsLimitFor(bytes: number | undefined): number | undefined {
  if (bytes === undefined || !Number.isFinite(bytes) || bytes <= 0) return undefined;
  const pages = Math.ceil((2 * bytes + 2 * LOADED_ACCOUNTS_PAGE_BYTES) / LOADED_ACCOUNTS_PAGE_BYTES);
  const limit = pages * LOADED_ACCOUNTS_PAGE_BYTES;
  return limit >= DEFAULT_LOADED_ACCOUNTS_BYTES ? undefined : limit;
}

const encoder = getTransactionEncoder();

/** The accounts a decompiled message write-locks (lookup-table accounts included), fee payer first. */
export function writableAccountsOf(message: Draft): string[] {
  const writable = new Set<string>([String(message.feePayer.address)]);
  for (const ix of message.instructions) {
    for (const meta of ix.accounts ?? []) if (isWritableRole(meta.role)) writable.add(String(meta.address));
  }
  return [...writable];
}

function invalid(message: string, cause?: unknown): SolgateError {
  return new SolgateError("INVALID_TRANSACTION", message, {}, { cause });
}

/** Creates the preparer. */
export function createPreparer(options: PreparerOptions): Preparer {
  const { rpc, blockhashes, fees } = options;
  const commitment = options.commitment ?? "confirmed";
  const marginPercent = options.marginPercent ?? 10;
  const marginUnits = options.marginUnits ?? 1000;
  const blockhashMaxAgeMs = options.blockhashMaxAgeMs ?? 1000;
  const tipMaxLamports = options.tipMaxLamports ?? DEFAULT_TIP_MAX_LAMPORTS;

  // Tables are read and checked by Solgate's own resolver, which says in its words what is wrong with
  // one (kit's fetching decompiler would put its own wording, "Not all accounts were decoded", in front of
  // the client), and cached like the fee estimates' tables.
  const lookupTables = createLookupTableResolver({ rpc, commitment });

  async function decompile(wire: Uint8Array): Promise<{ message: Draft; signers: number }> {
    const tx = decodeWireTransaction(wire);
    const lookups = tx.message.version === 0 ? (tx.message.addressTableLookups ?? []) : [];
    // Loads every table and checks every index the draft uses (SolgateError INVALID_TRANSACTION).
    await lookupTables.writableOf(tx.message);
    const addressesByLookupTableAddress: AddressesByLookupTableAddress = {};
    for (const lookup of lookups) {
      const table = lookup.lookupTableAddress;
      addressesByLookupTableAddress[table] = (await lookupTables.tableAddresses(table)) as Address[];
    }
    try {
      const message = decompileTransactionMessage(tx.message, { addressesByLookupTableAddress });
      return { message, signers: tx.signatures.length };
    } catch (error) {
      if (isSolgateError(error) || !isSolanaError(error)) throw error;
      throw invalid(`the draft cannot be decompiled: ${error.message}`, error);
    }
  }

  function compile(message: Draft): Uint8Array {
    let bytes: Uint8Array;
    try {
      bytes = new Uint8Array(encoder.encode(compileTransaction(message)));
    } catch (error) {
      if (!isSolanaError(error)) throw error;
      throw invalid(`the draft cannot be compiled: ${error.message}`, error);
    }
    if (bytes.length > MAX_TRANSACTION_BYTES) {
      throw new SolgateError(
        "INVALID_TRANSACTION",
        `with its compute-budget instructions the transaction is ${bytes.length} bytes; the limit is ${MAX_TRANSACTION_BYTES}`,
        { size: bytes.length },
      );
    }
    return bytes;
  }

  /**
   * Simulates the message at the largest compute-unit limit and returns the limit to set (the units consumed plus
   * the margin) and the loaded-accounts data size the node reported. With `loadedLimit`, the probe carries a
   * SetLoadedAccountsDataSizeLimit (at the 64 MiB default) so that its own units are counted.
   */
  async function measure(
    message: Draft,
    loadedLimit: boolean,
    signal: AbortSignal | undefined,
  ): Promise<{ units: number; loadedBytes: number | undefined }> {
    let probe = setTransactionMessageComputeUnitLimit(MAX_COMPUTE_UNITS, message);
    if (loadedLimit) probe = setTransactionMessageLoadedAccountsDataSizeLimit(DEFAULT_LOADED_ACCOUNTS_BYTES, probe);
    const outcome = await simulateWire(rpc, compile(probe), {
      commitment,
      // A durable nonce must be simulated as it is: the runtime checks the nonce, not the blockhash queue.
      draft: !isTransactionMessageWithDurableNonceLifetime(message),
      blockhash: String(
        message.lifetimeConstraint && "blockhash" in message.lifetimeConstraint
          ? message.lifetimeConstraint.blockhash
          : "",
      ),
      signal,
    });
    if (outcome.err !== null) throw simulationFailed(outcome);
    const units = Number(outcome.unitsConsumed ?? 0n);
    return {
      // Integer arithmetic: 450 * 1.1 is 495.00000000000006 in floating point.
      units: Math.min(MAX_COMPUTE_UNITS, units + Math.ceil((units * marginPercent) / 100) + marginUnits),
      loadedBytes: outcome.loadedAccountsDataSize,
    };
  }

  return {
    async prepare(request) {
      // A transaction that does not decode is refused as such first; then a bad tip, before anything is read.
      decodeWireTransaction(request.wire);
      const tip = request.tip === undefined ? undefined : await resolveTip(request.tip, options.tips, tipMaxLamports);
      const decompiled = await decompile(request.wire);
      const { signers } = decompiled;
      // The tip goes in before the simulation and the fee estimate: its units and its write lock count.
      const tipped = tip === undefined ? decompiled.message : withTipTransfer(decompiled.message, tip);
      const nonce = request.durableNonce;
      // Set before the simulation: a durable-nonce message is simulated as it will run (the nonce checked).
      const draft: Draft =
        nonce === undefined
          ? tipped
          : setTransactionMessageLifetimeUsingDurableNonce(
              {
                nonce: nonce.nonce as Nonce,
                nonceAccountAddress: nonce.nonceAccount as Address,
                nonceAuthorityAddress: nonce.authority as Address,
              },
              tipped,
            );
      const replace = request.replaceComputeBudget ?? false;
      const writable = writableAccountsOf(draft);
      const estimate = fees?.forAccounts(writable, signers);

      let message: Draft = draft;
      const existingPrice = getTransactionMessageComputeUnitPrice(message as Draft & { version: 0 | "legacy" });
      if (existingPrice === undefined || replace) {
        const price = priceOfChoice(request.priorityFee ?? AUTO_PRIORITY_FEE, fees, writable) ?? 0n;
        message = setTransactionMessageComputeUnitPrice(price, message as Draft & { version: 0 | "legacy" });
      }
      if (getTransactionMessageComputeUnitLimit(message) === undefined || replace) {
        // Only a draft Solgate measures gets a loaded-accounts limit: the simulation is what it is set from.
        const loadedLimit = getTransactionMessageLoadedAccountsDataSizeLimit(message) === undefined || replace;
        const measured = await measure(message, loadedLimit, request.signal);
        message = setTransactionMessageComputeUnitLimit(measured.units, message);
        if (loadedLimit) {
          // Without a figure from the node the draft keeps what it had (replace: none, agave's default).
          message = setTransactionMessageLoadedAccountsDataSizeLimit(
            loadedAccountsLimitFor(measured.loadedBytes),
            message,
          );
        }
      }

      let blockhash: string;
      let lastValidBlockHeight: bigint;
      if (isTransactionMessageWithDurableNonceLifetime(message)) {
        blockhash = String(message.lifetimeConstraint.nonce);
        lastValidBlockHeight = 0n;
      } else {
        ({ blockhash, lastValidBlockHeight } = await blockhashes.latest({ maxAgeMs: blockhashMaxAgeMs }));
        message = setTransactionMessageLifetimeUsingBlockhash(
          { blockhash: blockhash as Blockhash, lastValidBlockHeight },
          message,
        );
      }

      const wire = compile(message);
      const compiled = decodeWireTransaction(wire);
      const budget = computeBudgetOf(compiled.message);
      return {
        wire,
        blockhash,
        lastValidBlockHeight,
        computeUnitLimit: budget.unitLimit,
        computeUnitPrice: budget.unitPrice,
        loadedAccountsDataSizeLimit: budget.requestedLoadedAccountsBytes,
        estimate,
        expectedFee: transactionFeeLamports(compiled.signatures.length, budget),
        ...(tip === undefined ? {} : { tip }),
      };
    },
  };
}
