/**
 * Runs the traffic generator against the chain: after each block, the next slot's transactions
 * are decoded by the same gate as sendTransaction and queued on the chain's one transaction queue,
 * so blocks, getBlock and getRecentPrioritizationFees see them like any other.
 */
import { decodeTransaction, type DecodedTransaction } from "../wire/decode-transaction.ts";
import type { TrafficGenerator } from "./traffic-generator.ts";

/** What the runner needs of the chain. */
export interface TrafficChain {
  onBlock(listener: (block: { blockhash: string }) => void): () => void;
  submit(tx: DecodedTransaction): void;
}

export interface TrafficRunner {
  stop(): void;
  /** Transactions queued so far. */
  readonly submitted: number;
}

/**
 * Starts sending; `onError` hears about a transaction the gate refused (a bug, not an expected case).
 * With `tip` (the chain's newest block), the first slot's transactions are queued at once, so the very
 * first block carries traffic (and fee data) instead of the second.
 */
export function startTraffic(
  chain: TrafficChain,
  generator: TrafficGenerator,
  onError: (err: unknown) => void = () => {},
  tip?: { blockhash: string },
): TrafficRunner {
  let submitted = 0;
  const send = (block: { blockhash: string }) => {
    for (const tx of generator.next(block.blockhash)) {
      try {
        chain.submit(decodeTransaction(tx.wire));
        submitted++;
      } catch (err) {
        onError(err);
      }
    }
  };
  if (tip !== undefined) send(tip);
  const unsubscribe = chain.onBlock(send);
  return {
    stop: unsubscribe,
    get submitted() {
      return submitted;
    },
  };
}
