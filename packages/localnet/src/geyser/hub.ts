/**
 * The Geyser broadcast: after each produced block it builds the block's events (account writes,
 * transactions, block, block meta) and slot statuses, and hands them to every client at its
 * commitment, as the plugin's per-commitment broadcast does:
 * - processed: the block's events as it is produced, then `SLOT_PROCESSED`;
 * - confirmed / finalized: a slot's events again once it reaches that level, then its status;
 * - slot statuses (and the inter-slot `SLOT_CREATED_BANK`, `SLOT_COMPLETED`) go to every level.
 *
 * The last `replaySlots` slots are kept for `from_slot` replay. Account state is read from LiteSVM
 * right after the block, and only while a client wants accounts (so replayed slots carry accounts
 * only for slots produced while one did): one write per account per block, its state after the
 * block, `txn_signature` the last transaction that wrote it.
 */
import bs58 from "bs58";
import { CommitmentLevel, SlotStatus } from "../../gen/geyser_pb.js";
import type { Block } from "../chain/block-store.ts";
import type { Chain } from "../chain/chain.ts";
import type { Commitment } from "../rpc/protocol.ts";
import type { AccountWrite } from "./convert.ts";
import { blockEvents, slotEvent, type GeyserEvent, type SlotEvent } from "./events.ts";

const SYSTEM_PROGRAM = "11111111111111111111111111111111";
const LEVELS: readonly [Commitment, CommitmentLevel, SlotStatus][] = [
  ["processed", CommitmentLevel.PROCESSED, SlotStatus.SLOT_PROCESSED],
  ["confirmed", CommitmentLevel.CONFIRMED, SlotStatus.SLOT_CONFIRMED],
  ["finalized", CommitmentLevel.FINALIZED, SlotStatus.SLOT_FINALIZED],
];

/** A subscriber as the hub sees it. */
export interface HubClient {
  readonly commitment: CommitmentLevel;
  readonly wantsAccounts: boolean;
  deliver(event: GeyserEvent): void;
}

/** `from_slot` is older than what is kept. */
export class ReplayUnavailable extends Error {
  readonly firstAvailable: bigint;
  constructor(fromSlot: bigint, firstAvailable: bigint) {
    super(`broadcast from ${fromSlot} is not available, last available: ${firstAvailable}`);
    this.firstAvailable = firstAvailable;
  }
}

interface SlotRecord {
  readonly events: GeyserEvent[];
  readonly statuses: SlotEvent[];
  reached: CommitmentLevel;
}

export interface GeyserHub {
  attach(client: HubClient): () => void;
  /** Events of kept slots `>= fromSlot` that reached `commitment`, in slot order; throws {@link ReplayUnavailable}. */
  replay(fromSlot: bigint, commitment: CommitmentLevel): GeyserEvent[];
  /** Oldest slot `from_slot` can start at (undefined before the first block). */
  firstAvailable(): bigint | undefined;
  readonly clients: number;
  close(): void;
}

export function createGeyserHub({ chain, replaySlots }: { chain: Chain; replaySlots: number }): GeyserHub {
  const clients = new Set<HubClient>();
  const ring = new Map<bigint, SlotRecord>();
  const touched = new Set<string>();
  const ownerBytes = new Map<string, Uint8Array>();
  let writeVersion = 0n;
  const seen = {} as Record<Commitment, bigint>;
  for (const [c] of LEVELS) seen[c] = chain.slotAt(c);

  const publish = (level: CommitmentLevel | null, events: readonly GeyserEvent[]) => {
    for (const client of clients) {
      if (level !== null && client.commitment !== level) continue;
      for (const event of events) client.deliver(event);
    }
  };

  const bytesOfOwner = (owner: string): Uint8Array => {
    let bytes = ownerBytes.get(owner);
    if (bytes === undefined) {
      bytes = bs58.decode(owner);
      if (ownerBytes.size < 10_000) ownerBytes.set(owner, bytes);
    }
    return bytes;
  };

  /**
   * The accounts the block (and direct writes since the last one) wrote, with their last writer; their
   * state is read only when `read` (a client wants accounts). Direct writes are collected only while a
   * client is attached: seeding writes hundreds of thousands of accounts before anyone listens.
   */
  const writesOf = (block: Block, read: boolean): { count: number; writes: AccountWrite[] } => {
    const writers = new Map<string, { key: Uint8Array | null; signature: Uint8Array | undefined }>();
    const named = new Set<string>();
    for (const record of block.transactions) {
      record.keys.keys.forEach((key, i) => {
        named.add(key);
        if (record.keys.writable[i]) {
          writers.set(key, { key: record.keys.keyBytes[i]!, signature: record.tx.signatures[0] });
        }
      });
    }
    for (const address of touched) if (!named.has(address)) writers.set(address, { key: null, signature: undefined });
    touched.clear();
    if (!read) return { count: writers.size, writes: [] };
    const writes: AccountWrite[] = [];
    for (const [address, writer] of writers) {
      const key = writer.key ?? bs58.decode(address);
      const account = chain.executor.readAccount(address, key);
      const owner = account?.owner ?? SYSTEM_PROGRAM;
      writeVersion++;
      writes.push({
        slot: block.slot,
        address,
        pubkey: key,
        owner,
        ownerBytes: bytesOfOwner(owner),
        lamports: account?.lamports ?? 0n,
        executable: account?.executable ?? false,
        rentEpoch: account?.rentEpoch ?? 0n,
        data: account?.data ?? new Uint8Array(0),
        writeVersion,
        txnSignature: writer.signature,
      });
    }
    return { count: writers.size, writes };
  };

  const stopTouched = chain.onAccountsTouched(({ addresses }) => {
    if (clients.size === 0) return;
    for (const address of addresses) touched.add(address);
  });

  const stopBlocks = chain.onBlock((block) => {
    const wantsAccounts = [...clients].some((c) => c.wantsAccounts);
    const { count, writes } = writesOf(block, wantsAccounts);
    const event = blockEvents(block, writes, count);
    const data: GeyserEvent[] = [...event.accounts, ...event.transactions];
    const summary: GeyserEvent[] = [event, { kind: "blockMeta", of: event, createdAt: event.createdAt }];
    const processed = slotEvent(block.slot, block.parentSlot, SlotStatus.SLOT_PROCESSED);
    ring.set(block.slot, { events: [...data, ...summary], statuses: [processed], reached: CommitmentLevel.PROCESSED });
    while (ring.size > replaySlots) ring.delete(ring.keys().next().value!);

    publish(null, [slotEvent(block.slot, block.parentSlot, SlotStatus.SLOT_CREATED_BANK)]);
    publish(CommitmentLevel.PROCESSED, data);
    publish(null, [slotEvent(block.slot, undefined, SlotStatus.SLOT_COMPLETED)]);
    publish(CommitmentLevel.PROCESSED, summary);
    publish(null, [processed]);

    for (const [commitment, level, status] of LEVELS.slice(1)) {
      const upTo = chain.slotAt(commitment);
      for (let slot = seen[commitment] + 1n; slot <= upTo; slot++) {
        const record = ring.get(slot);
        if (record !== undefined) publish(level, record.events);
        const statusEvent = slotEvent(slot, chain.block(slot)?.parentSlot, status);
        if (record !== undefined) {
          record.statuses.push(statusEvent);
          record.reached = level;
        }
        publish(null, [statusEvent]);
      }
      if (upTo > seen[commitment]) seen[commitment] = upTo;
    }
    seen.processed = block.slot;
  });

  return {
    attach(client) {
      clients.add(client);
      return () => clients.delete(client);
    },
    replay(fromSlot, commitment) {
      const first = ring.keys().next().value;
      if (first === undefined) return [];
      if (fromSlot < first) throw new ReplayUnavailable(fromSlot, first);
      const out: GeyserEvent[] = [];
      for (const [slot, record] of ring) {
        if (slot < fromSlot || record.reached < commitment) continue;
        out.push(...record.events, ...record.statuses);
      }
      return out;
    },
    firstAvailable: () => ring.keys().next().value,
    get clients() {
      return clients.size;
    },
    close() {
      stopBlocks();
      stopTouched();
      clients.clear();
    },
  };
}
