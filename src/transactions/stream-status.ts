/**
 * Statuses from the Geyser stream, kept in memory: what `transactions_status` said of each recent signature
 * (its slot, its error, the commitment it was delivered at) and how far each recent slot got (processed,
 * confirmed, finalized, dead). The status engine answers from it instead of asking the node, under two rules:
 *
 * - A status is only as strong as what the stream said: the commitment it was delivered at, raised only by
 *   its own slot reaching a higher one (a transaction confirmed in slot S is finalized when S is). A failed
 *   transaction carries its error, decoded exactly as the node reports it; an error that cannot be decoded
 *   exactly makes the signature "ask the node".
 * - Absence means something only while the stream has been usable without a break since the signature was
 *   last read from the node: each change of the stream's health starts a new epoch, and the engine reads a
 *   signature from the node once per epoch before it trusts the stream's silence about it.
 *
 * Bounded: the newest `maxSignatures` signatures and `maxSlots` slots (oldest forgotten first).
 */
import type { GeyserStatusEvent } from "../upstream/geyser-source.ts";
import { decodeTransactionErrorBincode } from "./transaction-error-bincode.ts";
import type { SignatureStatusView } from "./transaction-status.ts";
import { BoundedMap } from "../bounded-map.ts";

type Commitment = "processed" | "confirmed" | "finalized";
const RANK: Record<Commitment, number> = { processed: 0, confirmed: 1, finalized: 2 };

/** A signature the stream delivered with an error it could not decode exactly: only the node can say. */
export const ASK_THE_NODE = "ask-the-node";

/** Options of {@link createStreamStatuses}. */
export interface StreamStatusesOptions {
  /** Whether the stream is usable now (connected, heard lately, not lagging): the source's `healthy`. */
  healthy: () => boolean;
  /** Signatures kept (default 50,000). */
  maxSignatures?: number;
  /** Slots whose status is kept (default 2,000: a confirmed slot finalizes about 32 slots later). */
  maxSlots?: number;
}

/** The memory. */
export interface StreamStatuses {
  /** Takes one event of the stream. */
  note(event: GeyserStatusEvent): void;
  /** Whether the stream is usable now. */
  usable(): boolean;
  /** Changes each time the stream's health changes: silence is trusted only within one epoch. */
  epoch(): number;
  /**
   * What the stream said of a signature: its status as strong as the stream can vouch for, ASK_THE_NODE
   * when it delivered something it could not read, undefined when it said nothing. With `knownSlot` (the
   * slot a read from the node found the signature confirmed, without error, in), a signature the stream did
   * not deliver is finalized once that slot is.
   */
  lookup(signature: string, knownSlot?: bigint): SignatureStatusView | typeof ASK_THE_NODE | undefined;
  /** Calls `listener` when what `lookup` says of a signature may have changed; returns the unsubscribe. */
  onChange(listener: (signature: string) => void): () => void;
  stats(): { signatures: number; slots: number; epoch: number };
}

interface Entry {
  readonly slot: bigint;
  /** The node's JSON error value, null on success, ASK_THE_NODE when undecodable. */
  readonly err: unknown;
  readonly commitment: Commitment;
}

/** Creates an empty memory. */
export function createStreamStatuses(options: StreamStatusesOptions): StreamStatuses {
  const maxSignatures = options.maxSignatures ?? 50_000;
  const maxSlots = options.maxSlots ?? 2000;
  const entries = new BoundedMap<string, Entry>(maxSignatures);
  // The signatures delivered in each kept slot, so that a slot finalizing tells their listeners.
  const bySlot = new Map<bigint, string[]>();
  const slots = new BoundedMap<bigint, Commitment | "dead">(maxSlots, (slot) => bySlot.delete(slot));
  const listeners = new Set<(signature: string) => void>();
  let epoch = 0;

  const tell = (signature: string) => {
    for (const listener of listeners) listener(signature);
  };

  function rememberSlot(slot: bigint, status: Commitment | "dead"): void {
    const current = slots.get(slot);
    if (current === "dead" || (current !== undefined && status !== "dead" && RANK[status] <= RANK[current])) return;
    slots.set(slot, status);
    if (status === "finalized" || status === "dead") for (const signature of bySlot.get(slot) ?? []) tell(signature);
  }

  function view(entry: Entry): SignatureStatusView | typeof ASK_THE_NODE | undefined {
    const slotStatus = slots.get(entry.slot);
    // Its block was abandoned: what the stream said no longer holds.
    if (slotStatus === "dead") return undefined;
    if (entry.err === ASK_THE_NODE) return ASK_THE_NODE;
    let commitment = entry.commitment;
    if (slotStatus !== undefined && RANK[slotStatus] > RANK[commitment]) commitment = slotStatus;
    return { slot: entry.slot, err: entry.err, confirmationStatus: commitment };
  }

  return {
    note(event) {
      if (event.kind === "health") {
        epoch++;
        return;
      }
      if (event.kind === "slot") {
        rememberSlot(event.slot, event.status);
        return;
      }
      const err = event.err === undefined ? null : (decodeTransactionErrorBincode(event.err) ?? ASK_THE_NODE);
      const current = entries.get(event.signature);
      if (current !== undefined && current.slot === event.slot && RANK[current.commitment] >= RANK[event.commitment])
        return;
      entries.delete(event.signature); // re-inserted as the newest
      entries.set(event.signature, { slot: event.slot, err, commitment: event.commitment });
      let inSlot = bySlot.get(event.slot);
      if (inSlot === undefined) {
        inSlot = [];
        bySlot.set(event.slot, inSlot);
      }
      inSlot.push(event.signature);
      if (!slots.has(event.slot)) rememberSlot(event.slot, event.commitment);
      tell(event.signature);
    },
    usable: options.healthy,
    epoch: () => epoch,
    lookup(signature, knownSlot) {
      const entry = entries.get(signature);
      if (entry !== undefined) return view(entry);
      if (knownSlot !== undefined && slots.get(knownSlot) === "finalized") {
        return { slot: knownSlot, err: null, confirmationStatus: "finalized" };
      }
      return undefined;
    },
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    stats: () => ({ signatures: entries.size, slots: slots.size, epoch }),
  };
}
