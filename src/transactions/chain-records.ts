/**
 * Records read from the chain, for signatures Solgate did not send (or no longer holds): the state a
 * status entry says, and the fee the transaction paid (`getTransaction`), once it is in a block.
 */
import type { GetTransactionApi, Rpc, Signature } from "@solana/kit";
import { observeStatus } from "./transaction-status.ts";
import type { SignatureStatusView, StatusRecord } from "./transaction-status.ts";

/** Reads records from the chain. */
export interface ChainRecords {
  /** The fee a landed transaction paid; undefined when the node cannot say (failures go to `onError`). */
  feeOf(signature: string): Promise<bigint | undefined>;
  /** The record a status entry makes, with the fee once it is in a block (`knownFee` saves the call). */
  recordOf(signature: string, status: SignatureStatusView, knownFee?: bigint): Promise<StatusRecord>;
}

/** Creates the reader. */
export function createChainRecords(
  rpc: Rpc<GetTransactionApi>,
  onError: (error: unknown) => void,
  now: () => number,
): ChainRecords {
  async function feeOf(signature: string): Promise<bigint | undefined> {
    try {
      const tx = await rpc
        .getTransaction(signature as Signature, {
          commitment: "confirmed",
          encoding: "base64",
          maxSupportedTransactionVersion: 0,
        })
        .send();
      return tx?.meta?.fee === undefined ? undefined : BigInt(tx.meta.fee);
    } catch (error) {
      onError(error);
      return undefined;
    }
  }

  return {
    feeOf,
    async recordOf(signature, status, knownFee) {
      const observed = observeStatus(status);
      const fee = observed.state === "submitted" ? undefined : (knownFee ?? (await feeOf(signature)));
      return {
        signature,
        state: observed.state,
        slot: observed.slot,
        updatedAt: new Date(now()),
        ...(observed.error === undefined ? {} : { error: observed.error }),
        ...(fee === undefined ? {} : { fee }),
      };
    },
  };
}
