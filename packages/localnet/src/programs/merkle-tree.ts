/**
 * A concurrent Merkle tree as SPL Account Compression keeps it: keccak-256 over (left ‖ right), empty
 * leaves all zeros, and the account layout (`ConcurrentMerkleTreeHeader` V1, then the tree: sequence
 * number, active index, buffer size, a ring of `max_buffer_size` change logs, the rightmost proof).
 *
 * The account holds only roots and recent paths, never the leaves; the leaves are kept here, in memory,
 * as an indexer (DAS's getAssetProof) keeps them, so that clients (the traffic) can supply proofs and
 * the emulated program can check them against the current root.
 */
import { keccak_256 } from "@noble/hashes/sha3";

export const EMPTY_NODE = new Uint8Array(32);
/** `CompressionAccountType::ConcurrentMerkleTree`. */
const ACCOUNT_TYPE_TREE = 1;
/** account type u8, header version u8, max_buffer_size u32, max_depth u32, authority, creation_slot u64, is_batch_initialized, padding [5]. */
export const TREE_HEADER_SIZE = 56;

export function keccak(...parts: Uint8Array[]): Uint8Array {
  const h = keccak_256.create();
  for (const part of parts) h.update(part);
  return h.digest();
}

/** Size of a tree account of `depth` and `bufferSize`, with a canopy of `canopyDepth` levels. */
export function treeAccountSize(depth: number, bufferSize: number, canopyDepth = 0): number {
  const changeLog = 32 + 32 * depth + 4 + 4;
  const path = 32 * depth + 32 + 4 + 4;
  return TREE_HEADER_SIZE + 8 + 8 + 8 + bufferSize * changeLog + path + canopySize(canopyDepth);
}

/** The canopy: the nodes of the top `canopyDepth` levels below the root (2 + 4 + ...), 32 bytes each. */
function canopySize(canopyDepth: number): number {
  return canopyDepth === 0 ? 0 : (2 ** (canopyDepth + 1) - 2) * 32;
}

export interface MerkleTree {
  readonly depth: number;
  readonly bufferSize: number;
  /** Levels kept in the account's canopy: a proof needs only `depth - canopyDepth` nodes. */
  readonly canopyDepth: number;
  /** Leaves appended so far (the next append's index). */
  readonly appended: number;
  readonly sequence: bigint;
  root(): Uint8Array;
  leaf(index: number): Uint8Array;
  /** The sibling nodes from the leaf up (depth of them). */
  proof(index: number): Uint8Array[];
  /**
   * Whether `proof` for `leaf` at `index` gives the current root; a proof shorter than `depth` (down to
   * `depth - canopyDepth`) is completed from the canopy, as the program does.
   */
  verify(leaf: Uint8Array, index: number, proof: readonly Uint8Array[]): boolean;
  /** Sets a leaf; returns the change log path (the new nodes from the leaf to the root, with their node indexes). */
  set(index: number, leaf: Uint8Array): { node: Uint8Array; index: number }[];
  append(leaf: Uint8Array): { index: number; path: { node: Uint8Array; index: number }[] };
  /** The account bytes now. */
  accountData(authority: Uint8Array, creationSlot: bigint): Uint8Array;
  /** An independent copy (a transaction changes a copy, kept only when it commits). */
  clone(): MerkleTree;
}

interface TreeState {
  levels: Map<number, Uint8Array>[];
  appended: number;
  sequence: bigint;
  changeLogs: { root: Uint8Array; path: Uint8Array[]; index: number }[];
  activeIndex: number;
}

export function createMerkleTree(depth: number, bufferSize: number, canopyDepth = 0, from?: TreeState): MerkleTree {
  const empty: Uint8Array[] = [EMPTY_NODE];
  for (let level = 1; level <= depth; level++) empty.push(keccak(empty[level - 1]!, empty[level - 1]!));
  const levels: Map<number, Uint8Array>[] =
    from?.levels.map((m) => new Map(m)) ?? Array.from({ length: depth + 1 }, () => new Map());
  const node = (level: number, index: number) => levels[level]!.get(index) ?? empty[level]!;
  let appended = from?.appended ?? 0;
  let sequence = from?.sequence ?? 0n;
  // The change log ring: the empty tree's root is its first entry (`initialize_merkle_tree`).
  const changeLogs: { root: Uint8Array; path: Uint8Array[]; index: number }[] = from?.changeLogs.slice() ?? [
    { root: empty[depth]!, path: empty.slice(0, depth), index: 0 },
  ];
  let activeIndex = from?.activeIndex ?? 0;

  const proof = (index: number): Uint8Array[] => {
    const out: Uint8Array[] = [];
    let i = index;
    for (let level = 0; level < depth; level++) {
      out.push(node(level, i ^ 1));
      i >>= 1;
    }
    return out;
  };

  const set = (index: number, leaf: Uint8Array) => {
    if (index < 0 || index >= 2 ** depth) throw new RangeError(`leaf ${index} outside a tree of depth ${depth}`);
    let i = index;
    let current = leaf;
    levels[0]!.set(i, current);
    const path = [{ node: current, index: (1 << depth) + index }];
    for (let level = 0; level < depth; level++) {
      const sibling = node(level, i ^ 1);
      current = (i & 1) === 0 ? keccak(current, sibling) : keccak(sibling, current);
      i >>= 1;
      levels[level + 1]!.set(i, current);
      path.push({ node: current, index: (1 << (depth - level - 1)) + i });
    }
    sequence++;
    activeIndex = (activeIndex + 1) % bufferSize;
    changeLogs[activeIndex] = { root: current, path: path.slice(0, depth).map((p) => p.node), index };
    return path;
  };

  return {
    depth,
    bufferSize,
    canopyDepth,
    get appended() {
      return appended;
    },
    get sequence() {
      return sequence;
    },
    root: () => node(depth, 0),
    leaf: (index) => node(0, index),
    proof,
    verify(leaf, index, partial) {
      if (partial.length > depth || partial.length < depth - canopyDepth) return false;
      const given = [...partial, ...proof(index).slice(partial.length)];
      let current = leaf;
      let i = index;
      for (let level = 0; level < depth; level++) {
        current = (i & 1) === 0 ? keccak(current, given[level]!) : keccak(given[level]!, current);
        i >>= 1;
      }
      return Buffer.compare(current, node(depth, 0)) === 0;
    },
    set,
    append(leaf) {
      const index = appended;
      const path = set(index, leaf);
      appended++;
      return { index, path };
    },
    accountData(authority, creationSlot) {
      const out = Buffer.alloc(treeAccountSize(depth, bufferSize, canopyDepth));
      out[0] = ACCOUNT_TYPE_TREE;
      out[1] = 0; // ConcurrentMerkleTreeHeaderData::V1
      out.writeUInt32LE(bufferSize, 2);
      out.writeUInt32LE(depth, 6);
      out.set(authority, 10);
      out.writeBigUInt64LE(creationSlot, 42);
      let at = TREE_HEADER_SIZE;
      out.writeBigUInt64LE(sequence, at);
      out.writeBigUInt64LE(BigInt(activeIndex), at + 8);
      out.writeBigUInt64LE(BigInt(Math.min(changeLogs.length, bufferSize)), at + 16);
      at += 24;
      for (let slot = 0; slot < bufferSize; slot++) {
        const log = changeLogs[slot];
        if (log !== undefined) {
          out.set(log.root, at);
          log.path.forEach((p, k) => out.set(p, at + 32 + 32 * k));
          out.writeUInt32LE(log.index, at + 32 + 32 * depth);
        }
        at += 32 + 32 * depth + 8;
      }
      // The rightmost proof: the last appended leaf, its siblings, and the next index.
      const last = Math.max(0, appended - 1);
      proof(last).forEach((p, k) => out.set(p, at + 32 * k));
      out.set(node(0, last), at + 32 * depth);
      out.writeUInt32LE(appended, at + 32 * depth + 32);
      at += 32 * depth + 40;
      // The canopy, in heap order from the root's children (heap index 2 on).
      for (let heap = 2; heap < 2 ** (canopyDepth + 1); heap++) {
        const fromTop = Math.floor(Math.log2(heap));
        out.set(node(depth - fromTop, heap - 2 ** fromTop), at + 32 * (heap - 2));
      }
      return new Uint8Array(out);
    },
    clone: () =>
      createMerkleTree(depth, bufferSize, canopyDepth, { levels, appended, sequence, changeLogs, activeIndex }),
  };
}
