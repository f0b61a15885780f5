/**
 * The sysvars that record history, kept as agave 3.0 keeps them, block by block (LiteSVM keeps one
 * recent blockhash, one slot hash and no stake history):
 * - RecentBlockhashes: the last 150 blockhashes, newest first, each with 5,000 lamports per
 *   signature, in an account of `RecentBlockhashes::size_of()` = 6,008 bytes;
 * - SlotHashes: the last 512 slots before the current one with their hashes (the block's hash
 *   stands in for the bank hash), newest first;
 * - SlotHistory: one bit per slot that has a block, `nextSlot` the slot after the current one;
 * - StakeHistory: at each epoch boundary, the ended epoch's effective stake (all of the bootstrap
 *   stake, none activating or deactivating), newest first, in `StakeHistory::size_of()` = 16,392
 *   bytes.
 * Each holds its rent-exempt minimum. Written straight into LiteSVM: sysvars are re-read on every
 * access, so the account index needs no notice.
 */
import bs58 from "bs58";
import { Account } from "litesvm";
import type { LiteSvm } from "../chain/litesvm-native.ts";

const U64_MAX = 0xffff_ffff_ffff_ffffn;
const SYSVAR_OWNER = bs58.decode("Sysvar1111111111111111111111111111111111111");
const RECENT_BLOCKHASHES = bs58.decode("SysvarRecentB1ockHashes11111111111111111111");
const SLOT_HASHES = bs58.decode("SysvarS1otHashes111111111111111111111111111");
const SLOT_HISTORY = bs58.decode("SysvarS1otHistory11111111111111111111111111");
const STAKE_HISTORY = bs58.decode("SysvarStakeHistory1111111111111111111111111");
const RECENT_BLOCKHASHES_MAX = 150;
const RECENT_BLOCKHASHES_SIZE = 8 + RECENT_BLOCKHASHES_MAX * 40;
const SLOT_HASHES_MAX = 512;
const SLOT_HASHES_SIZE = 8 + SLOT_HASHES_MAX * 40;
const SLOT_HISTORY_BITS = 1024 * 1024;
const SLOT_HISTORY_WORDS = SLOT_HISTORY_BITS / 64;
/** bitvec Some tag, word count, words, bit length, next slot. */
const SLOT_HISTORY_SIZE = 1 + 8 + SLOT_HISTORY_WORDS * 8 + 8 + 8;
const STAKE_HISTORY_MAX = 512;
const STAKE_HISTORY_SIZE = 8 + STAKE_HISTORY_MAX * 32;
const LAMPORTS_PER_SIGNATURE = 5000n;

/** The history sysvars of one chain. */
export interface HistorySysvars {
  /** Records a new block (its slot and hash) and, at an epoch boundary, the ended epoch's stake. */
  afterBlock(slot: bigint, blockhash: string, epoch: bigint): void;
}

/** Starts the history sysvars at the genesis block. */
export function createHistorySysvars(
  svm: LiteSvm,
  genesis: { slot: bigint; blockhash: string; epoch: bigint },
  effectiveStake: bigint,
): HistorySysvars {
  const rentExempt = (size: number) => svm.minimumBalanceForRentExemption(BigInt(size));
  const write = (key: Uint8Array, data: Uint8Array) =>
    svm.setAccount(key, new Account(rentExempt(data.length), data, SYSVAR_OWNER, false, U64_MAX));

  const blockhashes: Uint8Array[] = []; // newest first
  const slotHashes: Array<{ slot: bigint; hash: Uint8Array }> = []; // newest first
  const stakeHistory: bigint[] = []; // epochs, newest first
  const history = new Uint8Array(SLOT_HISTORY_SIZE);
  const historyView = new DataView(history.buffer);
  history[0] = 1;
  historyView.setBigUint64(1, BigInt(SLOT_HISTORY_WORDS), true);
  historyView.setBigUint64(9 + SLOT_HISTORY_WORDS * 8, BigInt(SLOT_HISTORY_BITS), true);
  let epoch = genesis.epoch;
  let previous = { slot: genesis.slot, hash: bs58.decode(genesis.blockhash) };

  const writeRecentBlockhashes = () => {
    const data = new Uint8Array(RECENT_BLOCKHASHES_SIZE);
    const view = new DataView(data.buffer);
    view.setBigUint64(0, BigInt(blockhashes.length), true);
    blockhashes.forEach((hash, i) => {
      data.set(hash, 8 + i * 40);
      view.setBigUint64(8 + i * 40 + 32, LAMPORTS_PER_SIGNATURE, true);
    });
    write(RECENT_BLOCKHASHES, data);
  };
  const writeSlotHashes = () => {
    const data = new Uint8Array(SLOT_HASHES_SIZE);
    const view = new DataView(data.buffer);
    view.setBigUint64(0, BigInt(slotHashes.length), true);
    slotHashes.forEach(({ slot, hash }, i) => {
      view.setBigUint64(8 + i * 40, slot, true);
      data.set(hash, 8 + i * 40 + 8);
    });
    write(SLOT_HASHES, data);
  };
  const markSlot = (slot: bigint) => {
    const bit = Number(slot % BigInt(SLOT_HISTORY_BITS));
    history[9 + (bit >>> 6) * 8 + ((bit & 63) >>> 3)]! |= 1 << (bit & 7);
    historyView.setBigUint64(9 + SLOT_HISTORY_WORDS * 8 + 8, slot + 1n, true);
  };
  const writeStakeHistory = () => {
    const data = new Uint8Array(STAKE_HISTORY_SIZE);
    const view = new DataView(data.buffer);
    view.setBigUint64(0, BigInt(stakeHistory.length), true);
    stakeHistory.forEach((e, i) => {
      view.setBigUint64(8 + i * 32, e, true);
      view.setBigUint64(8 + i * 32 + 8, effectiveStake, true); // effective; activating and deactivating stay 0
    });
    write(STAKE_HISTORY, data);
  };

  blockhashes.unshift(previous.hash);
  markSlot(genesis.slot);
  writeRecentBlockhashes();
  writeSlotHashes();
  write(SLOT_HISTORY, history);
  writeStakeHistory();

  return {
    afterBlock(slot, blockhash, blockEpoch) {
      const hash = bs58.decode(blockhash);
      blockhashes.unshift(hash);
      if (blockhashes.length > RECENT_BLOCKHASHES_MAX) blockhashes.pop();
      slotHashes.unshift(previous);
      if (slotHashes.length > SLOT_HASHES_MAX) slotHashes.pop();
      previous = { slot, hash };
      markSlot(slot);
      writeRecentBlockhashes();
      writeSlotHashes();
      write(SLOT_HISTORY, history);
      if (blockEpoch !== epoch) {
        for (let e = epoch; e < blockEpoch; e++) stakeHistory.unshift(e);
        if (stakeHistory.length > STAKE_HISTORY_MAX) stakeHistory.length = STAKE_HISTORY_MAX;
        epoch = blockEpoch;
        writeStakeHistory();
      }
    },
  };
}
