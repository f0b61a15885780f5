/**
 * Reads, from one successful transaction, the changes it made to collection membership:
 *
 * - Token Metadata: VerifyCollection, SetAndVerifyCollection, VerifySizedCollectionItem,
 *   SetAndVerifySizedCollectionItem and Verify (CollectionV1) add the item to the collection they name;
 *   UnverifyCollection, UnverifySizedCollectionItem and Unverify (CollectionV1) remove it; BurnNft,
 *   BurnEditionNft and Burn remove the burned mint from whichever collection it was a verified member of.
 *   The create instructions (CreateMetadataAccountV3, CreateV1, MintV1) are not read: the program refuses a
 *   `verified` collection there, so a classic item only ever joins a collection by a verify instruction.
 * - Bubblegum: mint_to_collection_v1, verify_collection and set_and_verify_collection add the leaf's asset;
 *   unverify_collection removes it; burn removes it; transfer changes its owner. The asset id and owner come
 *   from the leaf event Bubblegum writes through its log wrapper (the leaf as it is after the instruction).
 * - A single token (amount 1) changing owner, as the token balances show it, is a transfer of that mint.
 *
 * Instructions are read at the top level and as cross-program calls (a candy machine verifying through
 * Token Metadata). The transaction succeeded, so each instruction did what it says: an item that names a
 * collection without its authority's signature never reaches a verify instruction and so never appears here.
 * Whether a burned or transferred asset was a member is the feed's to decide (collection-feed.ts).
 */
import { createHash } from "node:crypto";
import type { FeedInstruction, FeedTransaction } from "./feed-block.ts";
import { BUBBLEGUM_PROGRAM, LOG_WRAPPERS, TOKEN_METADATA_PROGRAM } from "./program-keys.ts";
import { getBase58Decoder } from "@solana/kit";

/** One change to membership, in the order the transaction made them. */
export interface MembershipChange {
  /** `burned` and `transferred` name no collection: the asset's membership decides. */
  readonly kind: "added" | "removed" | "burned" | "transferred";
  /** The collection named by the instruction (added, removed). */
  readonly collection?: string;
  /** The item's mint or asset id, when the instruction names it. */
  readonly asset?: string;
  /** A classic item's Metadata account, when the instruction names that rather than its mint. */
  readonly metadata?: string;
  /** For a compressed burn: the tree and leaf nonce, whose PDA is the asset id. */
  readonly leaf?: { readonly tree: string; readonly nonce: bigint };
  readonly compressed: boolean;
  /** The owner after the change, when the instruction or leaf event tells it. */
  readonly owner?: string;
  /** The owner before it (transfers, burns), when told. */
  readonly previousOwner?: string;
  readonly instructionIndex: number;
  readonly innerIndex?: number;
  /** The instruction's name as its program calls it. */
  readonly instruction: string;
}

/** Token Metadata instructions (one-byte discriminators): name, item Metadata position, collection mint position. */
const METADATA_VERIFY: ReadonlyMap<
  number,
  { name: string; kind: "added" | "removed"; metadata: number; collection: number }
> = new Map([
  [18, { name: "verifyCollection", kind: "added", metadata: 0, collection: 3 }],
  [22, { name: "unverifyCollection", kind: "removed", metadata: 0, collection: 2 }],
  [25, { name: "setAndVerifyCollection", kind: "added", metadata: 0, collection: 4 }],
  [30, { name: "verifySizedCollectionItem", kind: "added", metadata: 0, collection: 3 }],
  [31, { name: "unverifySizedCollectionItem", kind: "removed", metadata: 0, collection: 3 }],
  [32, { name: "setAndVerifySizedCollectionItem", kind: "added", metadata: 0, collection: 4 }],
]);
/** Verify / Unverify (V1): `VerificationArgs` follows the discriminator; 1 is CollectionV1 (0 verifies a creator). */
const METADATA_VERIFY_V1 = 52;
const METADATA_UNVERIFY_V1 = 53;
const COLLECTION_V1 = 1;
/** Burns: name, burned mint position, owner position (when the instruction names the holder). */
const METADATA_BURN: ReadonlyMap<number, { name: string; mint: number; owner?: number }> = new Map([
  [29, { name: "burnNft", mint: 2, owner: 1 }],
  [37, { name: "burnEditionNft", mint: 2, owner: 1 }],
  [41, { name: "burn", mint: 4 }],
]);

function anchorDiscriminator(name: string): string {
  return createHash("sha256").update(`global:${name}`).digest().subarray(0, 8).toString("hex");
}

/** Bubblegum instructions by Anchor discriminator. The collection mint is account 8 where one is named. */
const BUBBLEGUM: ReadonlyMap<string, { name: string; kind: "added" | "removed" | "burned" | "transferred" }> = new Map(
  (
    [
      ["mint_to_collection_v1", "mintToCollectionV1", "added"],
      ["verify_collection", "verifyCollection", "added"],
      ["set_and_verify_collection", "setAndVerifyCollection", "added"],
      ["unverify_collection", "unverifyCollection", "removed"],
      ["burn", "burn", "burned"],
      ["transfer", "transfer", "transferred"],
    ] as const
  ).map(([rust, name, kind]) => [anchorDiscriminator(rust), { name, kind }]),
);
const BUBBLEGUM_COLLECTION_MINT = 8;
/** burn: tree_authority, leaf_owner, leaf_delegate, merkle_tree; args root, data_hash, creator_hash, nonce. */
const BURN_TREE = 3;
const BURN_NONCE_AT = 8 + 32 * 3;
/** transfer: tree_authority, leaf_owner, leaf_delegate, new_leaf_owner. */
const TRANSFER_OWNER = 1;

const base58 = getBase58Decoder();

/** Every membership change `tx` made, in instruction order. */
export function membershipChangesOf(tx: FeedTransaction): MembershipChange[] {
  const changes: MembershipChange[] = [];
  tx.instructions.forEach((ix, index) => {
    const inner = tx.inner.get(index) ?? [];
    readInstruction(tx, ix, index, undefined, inner, 0, changes);
    inner.forEach((innerIx, innerIndex) => {
      readInstruction(tx, innerIx, index, innerIndex, inner, innerIndex + 1, changes);
    });
  });
  readSingleTokenTransfers(tx, changes);
  return changes;
}

function readInstruction(
  tx: FeedTransaction,
  ix: FeedInstruction,
  instructionIndex: number,
  innerIndex: number | undefined,
  following: readonly FeedInstruction[],
  followingFrom: number,
  out: MembershipChange[],
): void {
  const program = tx.keys[ix.programIndex];
  const at = (position: number): string | undefined => {
    const index = ix.accounts[position];
    return index === undefined ? undefined : tx.keys[index];
  };
  const where = innerIndex === undefined ? { instructionIndex } : { instructionIndex, innerIndex };
  if (program === TOKEN_METADATA_PROGRAM) {
    const discriminator = ix.data[0];
    if (discriminator === undefined) return;
    const verify = METADATA_VERIFY.get(discriminator);
    if (verify !== undefined) {
      const metadata = at(verify.metadata);
      const collection = at(verify.collection);
      if (metadata !== undefined && collection !== undefined)
        out.push({ kind: verify.kind, collection, metadata, compressed: false, instruction: verify.name, ...where });
      return;
    }
    if (
      (discriminator === METADATA_VERIFY_V1 || discriminator === METADATA_UNVERIFY_V1) &&
      ix.data[1] === COLLECTION_V1
    ) {
      const metadata = at(2);
      const collection = at(3);
      const added = discriminator === METADATA_VERIFY_V1;
      if (metadata !== undefined && collection !== undefined)
        out.push({
          kind: added ? "added" : "removed",
          collection,
          metadata,
          compressed: false,
          instruction: added ? "verifyCollectionV1" : "unverifyCollectionV1",
          ...where,
        });
      return;
    }
    const burn = METADATA_BURN.get(discriminator);
    if (burn !== undefined) {
      const mint = at(burn.mint);
      const owner = burn.owner === undefined ? undefined : at(burn.owner);
      if (mint !== undefined)
        out.push({
          kind: "burned",
          asset: mint,
          compressed: false,
          ...(owner === undefined ? {} : { previousOwner: owner }),
          instruction: burn.name,
          ...where,
        });
    }
    return;
  }
  if (program !== BUBBLEGUM_PROGRAM || ix.data.length < 8) return;
  const spec = BUBBLEGUM.get(Buffer.from(ix.data.subarray(0, 8)).toString("hex"));
  if (spec === undefined) return;
  const leaf = leafEventAfter(tx, following, followingFrom);
  if (spec.kind === "burned") {
    const tree = at(BURN_TREE);
    if (tree === undefined || ix.data.length < BURN_NONCE_AT + 8) return;
    const nonce = Buffer.from(ix.data.buffer, ix.data.byteOffset + BURN_NONCE_AT, 8).readBigUInt64LE(0);
    const owner = at(1);
    out.push({
      kind: "burned",
      leaf: { tree, nonce },
      compressed: true,
      ...(owner === undefined ? {} : { previousOwner: owner }),
      instruction: spec.name,
      ...where,
    });
    return;
  }
  // Without the leaf event the asset is unknown: the instruction did not come from a Bubblegum that logs.
  if (leaf === undefined) return;
  if (spec.kind === "transferred") {
    const previous = at(TRANSFER_OWNER);
    out.push({
      kind: "transferred",
      asset: leaf.id,
      compressed: true,
      owner: leaf.owner,
      ...(previous === undefined ? {} : { previousOwner: previous }),
      instruction: spec.name,
      ...where,
    });
    return;
  }
  const collection = at(BUBBLEGUM_COLLECTION_MINT);
  if (collection === undefined) return;
  out.push({
    kind: spec.kind,
    collection,
    asset: leaf.id,
    compressed: true,
    owner: leaf.owner,
    instruction: spec.name,
    ...where,
  });
}

/**
 * The leaf Bubblegum logged after an instruction: the first call to a log wrapper, among the inner
 * instructions that follow, carrying `AccountCompressionEvent::ApplicationData(V1)` wrapping a
 * `LeafSchemaEvent` (event type 1, version V1, schema V1: id, owner, delegate, nonce, hashes).
 */
function leafEventAfter(
  tx: FeedTransaction,
  following: readonly FeedInstruction[],
  from: number,
): { id: string; owner: string } | undefined {
  for (let i = from; i < following.length; i++) {
    const ix = following[i]!;
    const program = tx.keys[ix.programIndex];
    if (program === BUBBLEGUM_PROGRAM) return undefined; // the next Bubblegum call logs its own leaf
    if (program === undefined || !LOG_WRAPPERS.has(program)) continue;
    const d = ix.data;
    // [1 ApplicationData][0 V1][u32 length][1 LeafSchemaEvent][0 Version::V1][0 LeafSchema::V1][id][owner]...
    if (d.length < 9 + 64 || d[0] !== 1 || d[1] !== 0 || d[6] !== 1 || d[7] !== 0 || d[8] !== 0) continue;
    return { id: base58.decode(d.subarray(9, 41)), owner: base58.decode(d.subarray(41, 73)) };
  }
  return undefined;
}

/** A mint of supply one moving from one owner to another, by the balances before and after. */
function readSingleTokenTransfers(tx: FeedTransaction, out: MembershipChange[]): void {
  const before = new Map<string, string>();
  for (const b of tx.preTokenBalances) if (b.amount === "1") before.set(b.mint, b.owner);
  for (const b of tx.postTokenBalances) {
    if (b.amount !== "1") continue;
    const previous = before.get(b.mint);
    if (previous === undefined || previous === b.owner || b.owner === "") continue;
    out.push({
      kind: "transferred",
      asset: b.mint,
      compressed: false,
      owner: b.owner,
      previousOwner: previous,
      instructionIndex: instructionTouching(tx, b.accountIndex),
      instruction: "transfer",
    });
  }
}

/** The first top-level instruction that names key `index`, itself or through its inner instructions. */
function instructionTouching(tx: FeedTransaction, index: number): number {
  for (let i = 0; i < tx.instructions.length; i++) {
    if (tx.instructions[i]!.accounts.includes(index)) return i;
    if ((tx.inner.get(i) ?? []).some((ix) => ix.accounts.includes(index))) return i;
  }
  return 0;
}
