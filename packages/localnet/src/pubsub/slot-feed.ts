/**
 * slotSubscribe, slotsUpdatesSubscribe and rootSubscribe, none of which take params:
 * - `slotNotification` `{parent, root, slot}` for every block;
 * - `slotsUpdatesNotification`, agave's `SlotUpdate` (tagged by `type`, millisecond `timestamp`):
 *   `createdBank` {parent}, `completed`, `frozen` {stats} for every block, `optimisticConfirmation`
 *   for every newly confirmed slot and `root` for every newly finalized one (a leader receives no
 *   shreds, so no `firstShredReceived`; nothing dies, so no `dead`);
 * - `rootNotification`, the bare slot number, for every newly finalized slot.
 */
import { checkArity, decodeParams } from "../accounts/params.ts";
import type { Chain } from "../chain/chain.ts";
import { notify, slotsIn, type Feed, type SubscriptionRef } from "./feed.ts";

type Kind = "slot" | "slotsUpdates" | "root";

/** Creates the slot, slot-updates and root feed. */
export function createSlotFeed({ chain }: { chain: Chain }): Feed {
  const subs = new Map<number, SubscriptionRef & { kind: Kind }>();
  const register = (kind: Kind) => (ref: SubscriptionRef, params: unknown[]) => {
    decodeParams(() => checkArity(params, 0, 0));
    subs.set(ref.id, { ...ref, kind });
  };
  return {
    subscribe: {
      slotSubscribe: register("slot"),
      slotsUpdatesSubscribe: register("slotsUpdates"),
      rootSubscribe: register("root"),
    },
    remove: (id) => subs.delete(id),
    onTick({ block, visible }) {
      if (subs.size === 0) return;
      const root = chain.slotAt("finalized");
      const now = Date.now();
      const failed = block.transactions.filter((r) => r.outcome.err !== null).length;
      const updates: Record<string, unknown>[] = [
        { type: "createdBank", parent: block.parentSlot, slot: block.slot, timestamp: now },
        { type: "completed", slot: block.slot, timestamp: now },
        {
          type: "frozen",
          slot: block.slot,
          timestamp: now,
          stats: {
            // The localnet does not split blocks into entries: one entry of all its transactions.
            numTransactionEntries: block.transactions.length === 0 ? 0 : 1,
            numSuccessfulTransactions: block.transactions.length - failed,
            numFailedTransactions: failed,
            maxTransactionsPerEntry: block.transactions.length,
          },
        },
        ...slotsIn(visible.confirmed).map((slot) => ({ type: "optimisticConfirmation", slot, timestamp: now })),
        ...slotsIn(visible.finalized).map((slot) => ({ type: "root", slot, timestamp: now })),
      ];
      const roots = slotsIn(visible.finalized);
      for (const sub of subs.values()) {
        if (sub.kind === "slot") notify(sub, "slotNotification", { parent: block.parentSlot, root, slot: block.slot });
        else if (sub.kind === "root") for (const slot of roots) notify(sub, "rootNotification", slot);
        else for (const update of updates) notify(sub, "slotsUpdatesNotification", update);
      }
    },
  };
}
