/**
 * Which transactions touched each address, newest first: what getSignaturesForAddress reads (agave
 * keeps this in its blockstore's address-signatures column). Every account key of a recorded
 * transaction counts, loaded lookup-table addresses included, as in agave. Bounded like the
 * signature history: beyond `limit` entries in all, the oldest blocks' entries go first.
 */

/** One transaction as listed for an address. */
export interface AddressSignature {
  signature: string;
  slot: bigint;
  /** Position in its block (newest-first order is by slot, then position, descending). */
  index: number;
}

/** Address to its transactions. */
export interface AddressSignatures {
  /** Records a block's transactions (called once per block, in slot order). */
  addBlock(
    slot: bigint,
    transactions: ReadonlyArray<{ signature: string; index: number; keys: readonly string[] }>,
  ): void;
  /** The address's entries, newest first (a live view: do not mutate). */
  newestFirst(address: string): readonly AddressSignature[];
  readonly size: number;
}

/** Creates an empty index keeping at most about `limit` entries. */
export function createAddressSignatures(limit: number): AddressSignatures {
  // Per address, oldest first (appends are cheap); read backwards.
  const byAddress = new Map<string, AddressSignature[]>();
  // Blocks in order with the addresses they added to, for pruning.
  const blocks: Array<{ slot: bigint; addresses: string[] }> = [];
  let size = 0;

  const prune = () => {
    while (size > limit && blocks.length > 1) {
      const oldest = blocks.shift()!;
      for (const address of oldest.addresses) {
        const list = byAddress.get(address);
        if (list === undefined) continue;
        let drop = 0;
        while (drop < list.length && list[drop]!.slot <= oldest.slot) drop++;
        list.splice(0, drop);
        size -= drop;
        if (list.length === 0) byAddress.delete(address);
      }
    }
  };

  return {
    addBlock(slot, transactions) {
      if (transactions.length === 0) return;
      const touched = new Set<string>();
      for (const tx of transactions) {
        const seen = new Set<string>();
        for (const address of tx.keys) {
          if (seen.has(address)) continue;
          seen.add(address);
          touched.add(address);
          let list = byAddress.get(address);
          if (list === undefined) byAddress.set(address, (list = []));
          list.push({ signature: tx.signature, slot, index: tx.index });
          size++;
        }
      }
      blocks.push({ slot, addresses: [...touched] });
      prune();
    },
    newestFirst(address) {
      const list = byAddress.get(address);
      return list === undefined ? [] : [...list].reverse();
    },
    get size() {
      return size;
    },
  };
}
