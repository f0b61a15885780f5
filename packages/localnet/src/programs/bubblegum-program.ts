/**
 * The emulated Bubblegum program (BGUMAp9...), v1 instructions with their Anchor encodings: the
 * 8-byte `sha256("global:<name>")` discriminators, Borsh arguments (MetadataArgs), the account orders,
 * TreeConfig (the tree authority PDA) and the leaf as Bubblegum hashes it (keccak-256 of version, id,
 * owner, delegate, nonce, data hash, creator hash; data hash keccak(keccak(MetadataArgs) ‖ fee bps);
 * creator hash keccak of the creators).
 *
 * Covered: mint_to_collection_v1, transfer, burn, verify_collection, unverify_collection. Each logs
 * `Instruction: <Name>` as Anchor does, writes its leaf event (`LeafSchemaEvent` V1 inside
 * `AccountCompressionEvent::ApplicationData` V1) through a call to SPL Noop (burn writes none, as
 * Bubblegum's does not), changes the tree through a call to Account Compression (`append` or
 * `replace_leaf`, which writes its change-log event through Noop), and keeps a sized collection's
 * count through Token Metadata's BubblegumSetCollectionSize. A proof (the remaining accounts, completed
 * from the tree's canopy) must match the tree's current root: the change-log fast-forward over a stale
 * root is not emulated.
 */
import { createHash } from "node:crypto";
import bs58 from "bs58";
import { findProgramAddressSync } from "../world/pda.ts";
import { BUBBLEGUM_PROGRAM, TOKEN_METADATA_PROGRAM } from "../accounts/program-ids.ts";
import { borshReader, type BorshReader } from "./borsh-reader.ts";
import { ProgramError, type AccountRef, type InvokeContext, type ProgramHandler } from "./emulated-programs.ts";
import { createMerkleTree, keccak, type MerkleTree } from "./merkle-tree.ts";
import { collectionAuthorityRecordPda, editionPda, metadataPda } from "./token-metadata-program.ts";
import { decodeMetadata } from "../world/token-metadata.ts";

export const ACCOUNT_COMPRESSION_PROGRAM = "cmtDvXumGCrqC1Age74AVPhSRVXJMd8PJS91L8KbNCK";
export const NOOP_PROGRAM = "noopb9bkMVfRPU8AsbpTUg8AWkHHKwYxL8jqsCR3MsN";
const PROGRAM_BYTES = bs58.decode(BUBBLEGUM_PROGRAM);

export function anchorDiscriminator(namespace: "global" | "account", name: string): Uint8Array {
  return createHash("sha256").update(`${namespace}:${name}`).digest().subarray(0, 8);
}

/** BubblegumError codes (Anchor numbering from 6000). */
const E = {
  AssetOwnerMismatch: 6000,
  PublicKeyMismatch: 6001,
  HashingMismatch: 6002,
  DataHashMismatch: 6010,
  TreeAuthorityIncorrect: 6016,
  InsufficientMintCapacity: 6017,
  CollectionNotFound: 6021,
  AlreadyVerified: 6022,
  AlreadyUnverified: 6023,
  CreatorDidNotVerify: 6006,
  InvalidCollectionAuthority: 6030,
  InstructionDidNotDeserialize: 102,
  InvalidRoot: 6100,
} as const;
const fail = (code: number, message: string): never => {
  throw new ProgramError(code, message);
};

/** TreeConfig: discriminator, tree_creator, tree_delegate, total_mint_capacity, num_minted, is_public, is_decompressible. */
export const TREE_CONFIG_SIZE = 96;
const TREE_CONFIG_DISCRIMINATOR = anchorDiscriminator("account", "TreeConfig");

export interface TreeConfig {
  creator: Uint8Array;
  delegate: Uint8Array;
  capacity: bigint;
  minted: bigint;
  isPublic: boolean;
}

export function encodeTreeConfig(config: TreeConfig): Uint8Array {
  const out = Buffer.alloc(TREE_CONFIG_SIZE);
  out.set(TREE_CONFIG_DISCRIMINATOR, 0);
  out.set(config.creator, 8);
  out.set(config.delegate, 40);
  out.writeBigUInt64LE(config.capacity, 72);
  out.writeBigUInt64LE(config.minted, 80);
  out[88] = config.isPublic ? 1 : 0;
  out[89] = 1; // DecompressibleState::Disabled
  return new Uint8Array(out);
}

function decodeTreeConfig(data: Uint8Array): TreeConfig | null {
  if (data.length < 90 || Buffer.compare(data.subarray(0, 8), TREE_CONFIG_DISCRIMINATOR) !== 0) return null;
  const view = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return {
    creator: data.slice(8, 40),
    delegate: data.slice(40, 72),
    capacity: view.readBigUInt64LE(72),
    minted: view.readBigUInt64LE(80),
    isPublic: data[88] === 1,
  };
}

export function treeConfigPda(tree: Uint8Array): Uint8Array {
  return findProgramAddressSync([tree], PROGRAM_BYTES)[0];
}
export function assetIdOf(tree: Uint8Array, nonce: bigint): Uint8Array {
  const n = Buffer.alloc(8);
  n.writeBigUInt64LE(nonce);
  return findProgramAddressSync([Buffer.from("asset"), tree, n], PROGRAM_BYTES)[0];
}
export const BUBBLEGUM_SIGNER = findProgramAddressSync([Buffer.from("collection_cpi")], PROGRAM_BYTES)[0];

/** Bubblegum's MetadataArgs. */
export interface MetadataArgs {
  name: string;
  symbol: string;
  uri: string;
  sellerFeeBasisPoints: number;
  primarySaleHappened: boolean;
  isMutable: boolean;
  editionNonce: number | null;
  tokenStandard: number | null;
  collection: { verified: boolean; key: string } | null;
  uses: { useMethod: number; remaining: bigint; total: bigint } | null;
  tokenProgramVersion: number;
  creators: { address: string; verified: boolean; share: number }[];
}

export function readMetadataArgs(r: BorshReader): MetadataArgs {
  return {
    name: r.string(),
    symbol: r.string(),
    uri: r.string(),
    sellerFeeBasisPoints: r.u16(),
    primarySaleHappened: r.bool(),
    isMutable: r.bool(),
    editionNonce: r.option(() => r.u8()),
    tokenStandard: r.option(() => r.u8()),
    collection: r.option(() => ({ verified: r.bool(), key: r.pubkey() })),
    uses: r.option(() => ({ useMethod: r.u8(), remaining: r.u64(), total: r.u64() })),
    tokenProgramVersion: r.u8(),
    creators: r.vec(() => ({ address: r.pubkey(), verified: r.bool(), share: r.u8() })),
  };
}

export function encodeMetadataArgs(m: MetadataArgs): Uint8Array {
  const parts: Buffer[] = [];
  const str = (s: string) => {
    const b = Buffer.from(s, "utf8");
    const n = Buffer.alloc(4);
    n.writeUInt32LE(b.length);
    parts.push(n, b);
  };
  const u8 = (v: number) => parts.push(Buffer.from([v]));
  const u64 = (v: bigint) => {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(v);
    parts.push(b);
  };
  str(m.name);
  str(m.symbol);
  str(m.uri);
  const fee = Buffer.alloc(2);
  fee.writeUInt16LE(m.sellerFeeBasisPoints);
  parts.push(fee);
  u8(m.primarySaleHappened ? 1 : 0);
  u8(m.isMutable ? 1 : 0);
  const option = <T>(value: T | null, write: (v: T) => void) => {
    u8(value === null ? 0 : 1);
    if (value !== null) write(value);
  };
  option(m.editionNonce, u8);
  option(m.tokenStandard, u8);
  option(m.collection, (c) => {
    u8(c.verified ? 1 : 0);
    parts.push(Buffer.from(bs58.decode(c.key)));
  });
  option(m.uses, (u) => {
    u8(u.useMethod);
    u64(u.remaining);
    u64(u.total);
  });
  u8(m.tokenProgramVersion);
  const n = Buffer.alloc(4);
  n.writeUInt32LE(m.creators.length);
  parts.push(n);
  for (const c of m.creators)
    parts.push(Buffer.from(bs58.decode(c.address)), Buffer.from([c.verified ? 1 : 0, c.share]));
  return new Uint8Array(Buffer.concat(parts));
}

/** Bubblegum's `hash_metadata`: keccak(keccak(MetadataArgs) ‖ seller_fee_basis_points LE). */
export function dataHashOf(m: MetadataArgs): Uint8Array {
  const fee = Buffer.alloc(2);
  fee.writeUInt16LE(m.sellerFeeBasisPoints);
  return keccak(keccak(encodeMetadataArgs(m)), fee);
}
/** Bubblegum's `hash_creators`. */
export function creatorHashOf(m: MetadataArgs): Uint8Array {
  return keccak(
    ...m.creators.map((c) =>
      Buffer.concat([Buffer.from(bs58.decode(c.address)), Buffer.from([c.verified ? 1 : 0, c.share])]),
    ),
  );
}

/** LeafSchema V1 and its hash. */
export interface Leaf {
  id: Uint8Array;
  owner: Uint8Array;
  delegate: Uint8Array;
  nonce: bigint;
  dataHash: Uint8Array;
  creatorHash: Uint8Array;
}
export function leafHash(leaf: Leaf): Uint8Array {
  const nonce = Buffer.alloc(8);
  nonce.writeBigUInt64LE(leaf.nonce);
  return keccak(Uint8Array.of(1), leaf.id, leaf.owner, leaf.delegate, nonce, leaf.dataHash, leaf.creatorHash);
}

/** `AccountCompressionEvent::ApplicationData(V1 { application_data: LeafSchemaEvent })`. */
function leafEventData(leaf: Leaf): Uint8Array {
  const nonce = Buffer.alloc(8);
  nonce.writeBigUInt64LE(leaf.nonce);
  // LeafSchemaEvent: event_type LeafSchemaEvent (1), version V1 (0), schema LeafSchema::V1 (0), fields, leaf_hash.
  const event = Buffer.concat([
    Buffer.from([1, 0, 0]),
    leaf.id,
    leaf.owner,
    leaf.delegate,
    nonce,
    leaf.dataHash,
    leaf.creatorHash,
    leafHash(leaf),
  ]);
  const length = Buffer.alloc(4);
  length.writeUInt32LE(event.length);
  return new Uint8Array(Buffer.concat([Buffer.from([1, 0]), length, event]));
}

/** `AccountCompressionEvent::ChangeLog(V1 { id, path, seq, index })`. */
function changeLogEventData(tree: Uint8Array, path: { node: Uint8Array; index: number }[], seq: bigint, index: number) {
  const parts: Buffer[] = [Buffer.from([0, 0]), Buffer.from(tree)];
  const n = Buffer.alloc(4);
  n.writeUInt32LE(path.length);
  parts.push(n);
  for (const p of path) {
    const i = Buffer.alloc(4);
    i.writeUInt32LE(p.index);
    parts.push(Buffer.from(p.node), i);
  }
  const tail = Buffer.alloc(12);
  tail.writeBigUInt64LE(seq, 0);
  tail.writeUInt32LE(index, 8);
  parts.push(tail);
  return new Uint8Array(Buffer.concat(parts));
}

/** What the emulation knows of one compressed asset (an indexer's view of the leaf). */
export interface CompressedLeaf {
  id: string;
  tree: string;
  nonce: bigint;
  owner: string;
  delegate: string;
  metadata: MetadataArgs;
  dataHash: Uint8Array;
  creatorHash: Uint8Array;
  burnt: boolean;
  /** The tree's sequence number after the last change. */
  seq: bigint;
}

export interface BubblegumState {
  readonly handler: ProgramHandler;
  /** Registers a tree that exists on chain (written at genesis), empty. */
  addTree(address: string, depth: number, bufferSize: number, canopyDepth?: number): MerkleTree;
  tree(address: string): MerkleTree | undefined;
  leaf(id: string): CompressedLeaf | undefined;
}

export function createBubblegum(): BubblegumState {
  const trees = new Map<string, MerkleTree>();
  const leaves = new Map<string, CompressedLeaf>();
  const D = {
    mintToCollectionV1: Buffer.from(anchorDiscriminator("global", "mint_to_collection_v1")).toString("hex"),
    transfer: Buffer.from(anchorDiscriminator("global", "transfer")).toString("hex"),
    burn: Buffer.from(anchorDiscriminator("global", "burn")).toString("hex"),
    verifyCollection: Buffer.from(anchorDiscriminator("global", "verify_collection")).toString("hex"),
    unverifyCollection: Buffer.from(anchorDiscriminator("global", "unverify_collection")).toString("hex"),
  };
  const APPEND = anchorDiscriminator("global", "append");
  const REPLACE_LEAF = anchorDiscriminator("global", "replace_leaf");

  const account = (ctx: InvokeContext, i: number): AccountRef =>
    ctx.accounts[i] ?? fail(E.InstructionDidNotDeserialize, "AnchorError: NotEnoughAccountKeys");
  const signed = (ref: AccountRef): AccountRef => ({ ...ref, signer: true });

  function treeOf(ctx: InvokeContext, treeAuthority: AccountRef, merkleTree: AccountRef) {
    // The transaction changes a copy of the tree, which replaces it when the transaction commits.
    const copyKey = `bubblegum-tree:${merkleTree.key}`;
    let tree = ctx.scratch.get(copyKey) as MerkleTree | undefined;
    if (tree === undefined) {
      const committed = trees.get(merkleTree.key);
      if (committed === undefined) fail(E.PublicKeyMismatch, "the merkle tree is not a tree this localnet knows");
      tree = committed!.clone();
      ctx.scratch.set(copyKey, tree);
      const copy = tree;
      ctx.onCommit(() => trees.set(merkleTree.key, copy));
    }
    if (Buffer.compare(treeConfigPda(merkleTree.bytes), treeAuthority.bytes) !== 0)
      fail(E.TreeAuthorityIncorrect, "TreeAuthorityIncorrect");
    const state = ctx.read(treeAuthority.key);
    const config = state?.owner === BUBBLEGUM_PROGRAM ? decodeTreeConfig(state.data) : null;
    if (config === null) fail(E.TreeAuthorityIncorrect, "TreeAuthorityIncorrect");
    return { tree: tree!, config: config!, configState: state! };
  }

  /** Account Compression's change, through its program and its Noop event, then the tree account's new bytes. */
  function compress(
    ctx: InvokeContext,
    refs: {
      merkleTree: AccountRef;
      authority: AccountRef;
      noop: AccountRef;
      compression: AccountRef;
      proof: readonly AccountRef[];
    },
    tree: MerkleTree,
    change:
      | { kind: "append"; leaf: Uint8Array }
      | { kind: "replace"; root: Uint8Array; previous: Uint8Array; leaf: Uint8Array; index: number },
  ): void {
    const data =
      change.kind === "append"
        ? Buffer.concat([APPEND, change.leaf])
        : Buffer.concat([REPLACE_LEAF, change.root, change.previous, change.leaf, u32(change.index)]);
    ctx.invoke(refs.compression, [refs.merkleTree, signed(refs.authority), refs.noop, ...refs.proof], data, () => {
      let path: { node: Uint8Array; index: number }[];
      let index: number;
      if (change.kind === "append") {
        const appended = tree.append(change.leaf);
        path = appended.path;
        index = appended.index;
      } else {
        path = tree.set(change.index, change.leaf);
        index = change.index;
      }
      ctx.invoke(refs.noop, [], changeLogEventData(refs.merkleTree.bytes, path, tree.sequence, index), () => {});
      const state = ctx.read(refs.merkleTree.key)!;
      // The trees it knows were written at start: created at slot 0.
      ctx.write(refs.merkleTree, { ...state, data: tree.accountData(signed(refs.authority).bytes, 0n) });
    });
  }

  /** Checks the collection accounts and authority; calls Token Metadata to move a sized collection's count. */
  function collectionCpi(
    ctx: InvokeContext,
    refs: {
      authority: AccountRef;
      record: AccountRef;
      collectionMint: AccountRef;
      collectionMetadata: AccountRef;
      edition: AccountRef;
      signer: AccountRef;
      tokenMetadata: AccountRef;
    },
    delta: 1n | -1n,
  ): void {
    if (!refs.authority.signer) fail(E.InvalidCollectionAuthority, "collection authority must sign");
    if (Buffer.compare(metadataPda(refs.collectionMint.bytes)[0], refs.collectionMetadata.bytes) !== 0)
      fail(E.CollectionNotFound, "CollectionNotFound");
    if (Buffer.compare(editionPda(refs.collectionMint.bytes)[0], refs.edition.bytes) !== 0)
      fail(E.CollectionNotFound, "CollectionNotFound");
    if (Buffer.compare(BUBBLEGUM_SIGNER, refs.signer.bytes) !== 0) fail(E.PublicKeyMismatch, "PublicKeyMismatch");
    if (refs.tokenMetadata.key !== TOKEN_METADATA_PROGRAM) fail(E.PublicKeyMismatch, "PublicKeyMismatch");
    const state = ctx.read(refs.collectionMetadata.key);
    if (state === null || state.owner !== TOKEN_METADATA_PROGRAM) fail(E.CollectionNotFound, "CollectionNotFound");
    const parent = decodeMetadata(state!.data);
    const record = refs.record.key === BUBBLEGUM_PROGRAM ? undefined : refs.record;
    if (record === undefined) {
      if (refs.authority.key !== parent.updateAuthority)
        fail(E.InvalidCollectionAuthority, "InvalidCollectionAuthority");
    } else if (
      Buffer.compare(collectionAuthorityRecordPda(refs.collectionMint.bytes, refs.authority.bytes)[0], record.bytes) !==
      0
    )
      fail(E.InvalidCollectionAuthority, "InvalidCollectionAuthority");
    if (parent.collectionDetails?.__kind !== "V1") return; // an unsized collection has no count to move
    const size = parent.collectionDetails.size + delta;
    const args = Buffer.alloc(9);
    args[0] = 36;
    args.writeBigUInt64LE(size < 0n ? 0n : size, 1);
    ctx.invoke(
      refs.tokenMetadata,
      [
        refs.collectionMetadata,
        refs.authority,
        refs.collectionMint,
        signed(refs.signer),
        ...(record === undefined ? [] : [record]),
      ],
      args,
    );
  }

  function remember(
    leaf: Leaf,
    tree: MerkleTree,
    treeKey: string,
    metadata: MetadataArgs,
    burnt: boolean,
    ctx: InvokeContext,
  ) {
    const record: CompressedLeaf = {
      id: bs58.encode(leaf.id),
      tree: treeKey,
      nonce: leaf.nonce,
      owner: bs58.encode(leaf.owner),
      delegate: bs58.encode(leaf.delegate),
      metadata,
      dataHash: leaf.dataHash,
      creatorHash: leaf.creatorHash,
      burnt,
      seq: tree.sequence,
    };
    ctx.onCommit(() => leaves.set(record.id, record));
    ctx.emit({ kind: "compressed-leaf", leaf: record });
  }

  function mintToCollectionV1(ctx: InvokeContext): void {
    ctx.log("Instruction: MintToCollectionV1");
    const [
      treeAuthority,
      leafOwner,
      leafDelegate,
      merkleTree,
      payer,
      treeDelegate,
      authority,
      record,
      collectionMint,
      collectionMetadata,
      edition,
      signer,
      noop,
      compression,
      tokenMetadata,
    ] = Array.from({ length: 15 }, (_, i) => account(ctx, i));
    const r = borshReader(ctx.data, 8, E.InstructionDidNotDeserialize);
    const args = readMetadataArgs(r);
    const { tree, config, configState } = treeOf(ctx, treeAuthority!, merkleTree!);
    if (!config.isPublic) {
      const delegateOk =
        treeDelegate!.signer &&
        (Buffer.compare(treeDelegate!.bytes, config.creator) === 0 ||
          Buffer.compare(treeDelegate!.bytes, config.delegate) === 0);
      if (!delegateOk) fail(E.TreeAuthorityIncorrect, "TreeAuthorityIncorrect");
    }
    if (config.minted >= config.capacity) fail(E.InsufficientMintCapacity, "InsufficientMintCapacity");
    if (args.collection === null || args.collection.key !== collectionMint!.key)
      fail(E.CollectionNotFound, "CollectionNotFound");
    if (args.collection!.verified) fail(E.AlreadyVerified, "AlreadyVerified");
    for (const creator of args.creators)
      if (creator.verified && !ctx.accounts.some((a) => a.key === creator.address && a.signer))
        fail(E.CreatorDidNotVerify, "CreatorDidNotVerify");
    void payer;
    collectionCpi(
      ctx,
      {
        authority: authority!,
        record: record!,
        collectionMint: collectionMint!,
        collectionMetadata: collectionMetadata!,
        edition: edition!,
        signer: signer!,
        tokenMetadata: tokenMetadata!,
      },
      1n,
    );
    const metadata: MetadataArgs = { ...args, collection: { key: args.collection!.key, verified: true } };
    const nonce = config.minted;
    const leaf: Leaf = {
      id: assetIdOf(merkleTree!.bytes, nonce),
      owner: leafOwner!.bytes,
      delegate: leafDelegate!.bytes,
      nonce,
      dataHash: dataHashOf(metadata),
      creatorHash: creatorHashOf(metadata),
    };
    ctx.invoke(noop!, [], leafEventData(leaf), () => {});
    compress(
      ctx,
      { merkleTree: merkleTree!, authority: treeAuthority!, noop: noop!, compression: compression!, proof: [] },
      tree,
      { kind: "append", leaf: leafHash(leaf) },
    );
    ctx.write(treeAuthority!, { ...configState, data: encodeTreeConfig({ ...config, minted: nonce + 1n }) });
    remember(leaf, tree, merkleTree!.key, metadata, false, ctx);
  }

  interface LeafArgs {
    root: Uint8Array;
    dataHash: Uint8Array;
    creatorHash: Uint8Array;
    nonce: bigint;
    index: number;
  }
  const readLeafArgs = (r: BorshReader): LeafArgs => ({
    root: r.bytes(32),
    dataHash: r.bytes(32),
    creatorHash: r.bytes(32),
    nonce: r.u64(),
    index: r.u32(),
  });

  /** The leaf the caller claims, checked against the tree's root with the proof in the remaining accounts. */
  function provenLeaf(
    tree: MerkleTree,
    treeKey: AccountRef,
    args: LeafArgs,
    owner: AccountRef,
    delegate: AccountRef,
    proof: readonly AccountRef[],
  ): Leaf {
    const leaf: Leaf = {
      id: assetIdOf(treeKey.bytes, args.nonce),
      owner: owner.bytes,
      delegate: delegate.bytes,
      nonce: args.nonce,
      dataHash: args.dataHash,
      creatorHash: args.creatorHash,
    };
    if (Buffer.compare(args.root, tree.root()) !== 0) fail(E.InvalidRoot, "Invalid root recomputed from proof");
    if (
      !tree.verify(
        leafHash(leaf),
        args.index,
        proof.map((p) => p.bytes),
      )
    )
      fail(E.InvalidRoot, "Invalid root recomputed from proof");
    return leaf;
  }

  function transfer(ctx: InvokeContext): void {
    ctx.log("Instruction: Transfer");
    const [treeAuthority, leafOwner, leafDelegate, newOwner, merkleTree, noop, compression] = Array.from(
      { length: 7 },
      (_, i) => account(ctx, i),
    );
    const proof = ctx.accounts.slice(8);
    const args = readLeafArgs(borshReader(ctx.data, 8, E.InstructionDidNotDeserialize));
    const { tree } = treeOf(ctx, treeAuthority!, merkleTree!);
    if (!leafOwner!.signer && !leafDelegate!.signer) fail(E.AssetOwnerMismatch, "Asset Owner Does not match");
    const previous = provenLeaf(tree, merkleTree!, args, leafOwner!, leafDelegate!, proof);
    const next: Leaf = { ...previous, owner: newOwner!.bytes, delegate: newOwner!.bytes };
    ctx.invoke(noop!, [], leafEventData(next), () => {});
    compress(
      ctx,
      { merkleTree: merkleTree!, authority: treeAuthority!, noop: noop!, compression: compression!, proof },
      tree,
      { kind: "replace", root: args.root, previous: leafHash(previous), leaf: leafHash(next), index: args.index },
    );
    const known = leaves.get(bs58.encode(next.id));
    if (known !== undefined) remember(next, tree, merkleTree!.key, known.metadata, false, ctx);
  }

  function burn(ctx: InvokeContext): void {
    ctx.log("Instruction: Burn");
    const [treeAuthority, leafOwner, leafDelegate, merkleTree, noop, compression] = Array.from({ length: 6 }, (_, i) =>
      account(ctx, i),
    );
    const proof = ctx.accounts.slice(7);
    const args = readLeafArgs(borshReader(ctx.data, 8, E.InstructionDidNotDeserialize));
    const { tree } = treeOf(ctx, treeAuthority!, merkleTree!);
    if (!leafOwner!.signer && !leafDelegate!.signer) fail(E.AssetOwnerMismatch, "Asset Owner Does not match");
    const previous = provenLeaf(tree, merkleTree!, args, leafOwner!, leafDelegate!, proof);
    compress(
      ctx,
      { merkleTree: merkleTree!, authority: treeAuthority!, noop: noop!, compression: compression!, proof },
      tree,
      { kind: "replace", root: args.root, previous: leafHash(previous), leaf: new Uint8Array(32), index: args.index },
    );
    const known = leaves.get(bs58.encode(previous.id));
    if (known !== undefined) remember(previous, tree, merkleTree!.key, known.metadata, true, ctx);
  }

  function setCollectionVerified(ctx: InvokeContext, verify: boolean): void {
    ctx.log(verify ? "Instruction: VerifyCollection" : "Instruction: UnverifyCollection");
    const [
      treeAuthority,
      leafOwner,
      leafDelegate,
      merkleTree,
      payer,
      treeDelegate,
      authority,
      record,
      collectionMint,
      collectionMetadata,
      edition,
      signer,
      noop,
      compression,
      tokenMetadata,
    ] = Array.from({ length: 15 }, (_, i) => account(ctx, i));
    void payer;
    void treeDelegate;
    const proof = ctx.accounts.slice(16);
    const r = borshReader(ctx.data, 8, E.InstructionDidNotDeserialize);
    const args = readLeafArgs(r);
    const message = readMetadataArgs(r);
    const { tree } = treeOf(ctx, treeAuthority!, merkleTree!);
    if (Buffer.compare(dataHashOf(message), args.dataHash) !== 0) fail(E.DataHashMismatch, "DataHashMismatch");
    if (Buffer.compare(creatorHashOf(message), args.creatorHash) !== 0) fail(E.DataHashMismatch, "CreatorHashMismatch");
    const previous = provenLeaf(tree, merkleTree!, args, leafOwner!, leafDelegate!, proof);
    if (message.collection === null || message.collection.key !== collectionMint!.key)
      fail(E.CollectionNotFound, "CollectionNotFound");
    if (message.collection!.verified === verify)
      fail(verify ? E.AlreadyVerified : E.AlreadyUnverified, verify ? "AlreadyVerified" : "AlreadyUnverified");
    collectionCpi(
      ctx,
      {
        authority: authority!,
        record: record!,
        collectionMint: collectionMint!,
        collectionMetadata: collectionMetadata!,
        edition: edition!,
        signer: signer!,
        tokenMetadata: tokenMetadata!,
      },
      verify ? 1n : -1n,
    );
    const metadata: MetadataArgs = { ...message, collection: { key: message.collection!.key, verified: verify } };
    const next: Leaf = { ...previous, dataHash: dataHashOf(metadata) };
    ctx.invoke(noop!, [], leafEventData(next), () => {});
    compress(
      ctx,
      { merkleTree: merkleTree!, authority: treeAuthority!, noop: noop!, compression: compression!, proof },
      tree,
      { kind: "replace", root: args.root, previous: leafHash(previous), leaf: leafHash(next), index: args.index },
    );
    remember(next, tree, merkleTree!.key, metadata, false, ctx);
  }

  const handler: ProgramHandler = (ctx) => {
    const d = Buffer.from(ctx.data.subarray(0, 8)).toString("hex");
    if (ctx.data.length < 8) fail(100, "AnchorError: InstructionMissing");
    if (d === D.mintToCollectionV1) return mintToCollectionV1(ctx);
    if (d === D.transfer) return transfer(ctx);
    if (d === D.burn) return burn(ctx);
    if (d === D.verifyCollection) return setCollectionVerified(ctx, true);
    if (d === D.unverifyCollection) return setCollectionVerified(ctx, false);
    return fail(
      101,
      "the localnet's Bubblegum emulation does not cover this instruction (AnchorError: InstructionFallbackNotFound)",
    );
  };

  return {
    handler,
    addTree(address, depth, bufferSize, canopyDepth = 0) {
      const tree = createMerkleTree(depth, bufferSize, canopyDepth);
      trees.set(address, tree);
      return tree;
    },
    tree: (address) => trees.get(address),
    leaf: (id) => leaves.get(id),
  };
}

function u32(v: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(v);
  return b;
}
