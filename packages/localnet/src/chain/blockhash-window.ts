/**
 * The recent-blockhash window a validator checks transactions against.
 *
 * LiteSVM only accepts its single latest blockhash, so its check is off and this window decides:
 * a blockhash produced at block height `h` is valid for blocks up to height `h + 150`
 * (agave's MAX_PROCESSING_AGE), which is also the `lastValidBlockHeight` a node reports.
 */

/** agave's MAX_PROCESSING_AGE. */
export const MAX_PROCESSING_AGE = 150n;

/** Blockhash to block height, pruned as the chain moves on. */
export interface BlockhashWindow {
  add(blockhash: string, blockHeight: bigint): void;
  /** Height at which the blockhash was produced, if still remembered. */
  heightOf(blockhash: string): bigint | undefined;
  /** Is the blockhash usable by a block at `blockHeight`? */
  isValidAt(blockhash: string, blockHeight: bigint): boolean;
  /** `heightOf + 150`, or undefined for an unknown blockhash. */
  lastValidBlockHeight(blockhash: string): bigint | undefined;
  /** Forgets blockhashes that can no longer be valid at `blockHeight` or later (keeping a margin for lagging views). */
  prune(blockHeight: bigint): void;
}

/** Creates an empty window. `maxAge` defaults to 150. */
export function createBlockhashWindow(maxAge: bigint = MAX_PROCESSING_AGE): BlockhashWindow {
  const heights = new Map<string, bigint>();
  return {
    add(blockhash, blockHeight) {
      heights.set(blockhash, blockHeight);
    },
    heightOf: (blockhash) => heights.get(blockhash),
    isValidAt(blockhash, blockHeight) {
      const h = heights.get(blockhash);
      return h !== undefined && h <= blockHeight && blockHeight <= h + maxAge;
    },
    lastValidBlockHeight(blockhash) {
      const h = heights.get(blockhash);
      return h === undefined ? undefined : h + maxAge;
    },
    prune(blockHeight) {
      // Insertion order is height order, so stop at the first one still needed.
      for (const [hash, h] of heights) {
        if (h + maxAge * 3n >= blockHeight) break;
        heights.delete(hash);
      }
    },
  };
}
