/**
 * The instructions the collection traffic sends, in their programs' real encodings: System, SPL Token,
 * the Associated Token Account program, Token Metadata (CreateMetadataAccountV3, CreateMasterEditionV3,
 * VerifySizedCollectionItem, UnverifySizedCollectionItem, Verify CollectionV1, BurnNft) and Bubblegum
 * (mint_to_collection_v1, transfer, burn). Tests build theirs with them too.
 */
import bs58 from "bs58";
import {
  ASSOCIATED_TOKEN_PROGRAM,
  BUBBLEGUM_PROGRAM,
  SYSTEM_PROGRAM,
  TOKEN_METADATA_PROGRAM,
  TOKEN_PROGRAM,
} from "../accounts/program-ids.ts";
import {
  ACCOUNT_COMPRESSION_PROGRAM,
  anchorDiscriminator,
  BUBBLEGUM_SIGNER,
  encodeMetadataArgs,
  NOOP_PROGRAM,
  treeConfigPda,
  type MetadataArgs,
} from "../programs/bubblegum-program.ts";
import { collectionAuthorityRecordPda, editionPda, metadataPda } from "../programs/token-metadata-program.ts";
import { associatedTokenAddress } from "../world/program-ids.ts";
import type { Instruction, InstructionAccount } from "./signed-transaction.ts";

const key = (address: string) => bs58.decode(address);
const SYSTEM = key(SYSTEM_PROGRAM);
const TOKEN = key(TOKEN_PROGRAM);
const ATA = key(ASSOCIATED_TOKEN_PROGRAM);
const TM = key(TOKEN_METADATA_PROGRAM);
const BGUM = key(BUBBLEGUM_PROGRAM);
const COMPRESSION = key(ACCOUNT_COMPRESSION_PROGRAM);
const NOOP = key(NOOP_PROGRAM);
const SYSVAR_INSTRUCTIONS = key("Sysvar1nstructions1111111111111111111111111");

export const MINT_SIZE = 82;
const w = (k: Uint8Array, signer = false): InstructionAccount => ({ key: k, writable: true, signer });
const r = (k: Uint8Array, signer = false): InstructionAccount => ({ key: k, signer });

const u64 = (v: bigint) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(v);
  return b;
};
const u32 = (v: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(v);
  return b;
};
const str = (s: string) => {
  const b = Buffer.from(s, "utf8");
  return Buffer.concat([u32(b.length), b]);
};

export function createAccount(
  payer: Uint8Array,
  account: Uint8Array,
  lamports: bigint,
  space: number,
  owner: Uint8Array,
): Instruction {
  return {
    program: SYSTEM,
    accounts: [w(payer, true), w(account, true)],
    data: Buffer.concat([u32(0), u64(lamports), u64(BigInt(space)), owner]),
  };
}

export function initializeMint2(mint: Uint8Array, authority: Uint8Array): Instruction {
  return {
    program: TOKEN,
    accounts: [w(mint)],
    data: Buffer.concat([Buffer.from([20, 0]), authority, Buffer.from([1]), authority]),
  };
}

export function createAssociatedTokenIdempotent(payer: Uint8Array, wallet: Uint8Array, mint: Uint8Array): Instruction {
  return {
    program: ATA,
    accounts: [w(payer, true), w(associatedTokenAddress(wallet, mint)), r(wallet), r(mint), r(SYSTEM), r(TOKEN)],
    data: Uint8Array.of(1),
  };
}

export function mintTo(mint: Uint8Array, destination: Uint8Array, authority: Uint8Array): Instruction {
  return {
    program: TOKEN,
    accounts: [w(mint), w(destination), r(authority, true)],
    data: Buffer.concat([Buffer.from([7]), u64(1n)]),
  };
}

export function tokenTransfer(source: Uint8Array, destination: Uint8Array, owner: Uint8Array): Instruction {
  return {
    program: TOKEN,
    accounts: [w(source), w(destination), r(owner, true)],
    data: Buffer.concat([Buffer.from([3]), u64(1n)]),
  };
}

export interface NewMetadata {
  name: string;
  symbol: string;
  uri: string;
  sellerFeeBasisPoints: number;
  creators: { address: Uint8Array; verified: boolean; share: number }[];
  /** The collection named (never verified here: the program refuses that). */
  collection: Uint8Array | null;
}

export function createMetadataAccountV3(
  mint: Uint8Array,
  authority: Uint8Array,
  payer: Uint8Array,
  m: NewMetadata,
): Instruction {
  const creators =
    m.creators.length === 0
      ? Buffer.from([0])
      : Buffer.concat([
          Buffer.from([1]),
          u32(m.creators.length),
          ...m.creators.map((c) => Buffer.concat([c.address, Buffer.from([c.verified ? 1 : 0, c.share])])),
        ]);
  const collection = m.collection === null ? Buffer.from([0]) : Buffer.concat([Buffer.from([1, 0]), m.collection]);
  const fee = Buffer.alloc(2);
  fee.writeUInt16LE(m.sellerFeeBasisPoints);
  const data = Buffer.concat([
    Buffer.from([33]),
    str(m.name),
    str(m.symbol),
    str(m.uri),
    fee,
    creators,
    collection,
    Buffer.from([0]), // uses: None
    Buffer.from([1]), // is_mutable
    Buffer.from([0]), // collection_details: None
  ]);
  return {
    program: TM,
    accounts: [w(metadataPda(mint)[0]), r(mint), r(authority, true), w(payer, true), r(authority, true), r(SYSTEM)],
    data,
  };
}

export function createMasterEditionV3(mint: Uint8Array, authority: Uint8Array, payer: Uint8Array): Instruction {
  return {
    program: TM,
    accounts: [
      w(editionPda(mint)[0]),
      w(mint),
      r(authority, true),
      r(authority, true),
      w(payer, true),
      w(metadataPda(mint)[0]),
      r(TOKEN),
      r(SYSTEM),
    ],
    data: Buffer.concat([Buffer.from([17, 1]), u64(0n)]),
  };
}

/** The collection's accounts, and the delegate's record when a delegate signs. */
export interface CollectionRefs {
  mint: Uint8Array;
  authority: Uint8Array;
  /** The authority is a delegate with a collection authority record. */
  delegated: boolean;
}

export function verifySizedCollectionItem(
  item: Uint8Array,
  payer: Uint8Array,
  c: CollectionRefs,
  verify: boolean,
): Instruction {
  const accounts = [
    w(metadataPda(item)[0]),
    r(c.authority, true),
    w(payer, true),
    r(c.mint),
    w(metadataPda(c.mint)[0]),
    r(editionPda(c.mint)[0]),
  ];
  if (c.delegated) accounts.push(r(collectionAuthorityRecordPda(c.mint, c.authority)[0]));
  return { program: TM, accounts, data: Uint8Array.of(verify ? 30 : 31) };
}

/** Verify (52) with VerificationArgs::CollectionV1. */
export function verifyCollectionV1(item: Uint8Array, c: CollectionRefs): Instruction {
  return {
    program: TM,
    accounts: [
      r(c.authority, true),
      r(c.delegated ? collectionAuthorityRecordPda(c.mint, c.authority)[0] : TM),
      w(metadataPda(item)[0]),
      r(c.mint),
      w(metadataPda(c.mint)[0]),
      r(editionPda(c.mint)[0]),
      r(SYSTEM),
      r(SYSVAR_INSTRUCTIONS),
    ],
    data: Uint8Array.of(52, 1),
  };
}

export function burnNft(item: Uint8Array, owner: Uint8Array, collectionMint: Uint8Array | null): Instruction {
  const accounts = [
    w(metadataPda(item)[0]),
    w(owner, true),
    w(item),
    w(associatedTokenAddress(owner, item)),
    w(editionPda(item)[0]),
    r(TOKEN),
  ];
  if (collectionMint !== null) accounts.push(w(metadataPda(collectionMint)[0]));
  return { program: TM, accounts, data: Uint8Array.of(29) };
}

export function mintToCollectionV1(
  tree: Uint8Array,
  owner: Uint8Array,
  treeDelegate: Uint8Array,
  payer: Uint8Array,
  c: CollectionRefs,
  metadata: MetadataArgs,
): Instruction {
  return {
    program: BGUM,
    accounts: [
      w(treeConfigPda(tree)),
      r(owner),
      r(owner),
      w(tree),
      r(payer, true),
      r(treeDelegate, true),
      r(c.authority, true),
      r(c.delegated ? collectionAuthorityRecordPda(c.mint, c.authority)[0] : BGUM),
      r(c.mint),
      w(metadataPda(c.mint)[0]),
      r(editionPda(c.mint)[0]),
      r(BUBBLEGUM_SIGNER),
      r(NOOP),
      r(COMPRESSION),
      r(TM),
      r(SYSTEM),
    ],
    data: Buffer.concat([anchorDiscriminator("global", "mint_to_collection_v1"), encodeMetadataArgs(metadata)]),
  };
}

/** The leaf a transfer or burn names: the tree's root, the leaf's hashes, nonce and index, and the proof. */
export interface LeafProof {
  root: Uint8Array;
  dataHash: Uint8Array;
  creatorHash: Uint8Array;
  nonce: bigint;
  index: number;
  proof: readonly Uint8Array[];
}

const leafArgs = (p: LeafProof) => Buffer.concat([p.root, p.dataHash, p.creatorHash, u64(p.nonce), u32(p.index)]);

export function compressedTransfer(tree: Uint8Array, owner: Uint8Array, to: Uint8Array, p: LeafProof): Instruction {
  return {
    program: BGUM,
    accounts: [
      r(treeConfigPda(tree)),
      r(owner, true),
      r(owner),
      r(to),
      w(tree),
      r(NOOP),
      r(COMPRESSION),
      r(SYSTEM),
      ...p.proof.map((n) => r(n)),
    ],
    data: Buffer.concat([anchorDiscriminator("global", "transfer"), leafArgs(p)]),
  };
}

export function compressedBurn(tree: Uint8Array, owner: Uint8Array, p: LeafProof): Instruction {
  return {
    program: BGUM,
    accounts: [
      r(treeConfigPda(tree)),
      r(owner, true),
      r(owner),
      w(tree),
      r(NOOP),
      r(COMPRESSION),
      r(SYSTEM),
      ...p.proof.map((n) => r(n)),
    ],
    data: Buffer.concat([anchorDiscriminator("global", "burn"), leafArgs(p)]),
  };
}

/** Burn (41) with BurnArgs::V1 { amount: 1 } of a non-programmable NFT. */
export function burnV1(item: Uint8Array, owner: Uint8Array, collectionMint: Uint8Array | null): Instruction {
  return {
    program: TM,
    accounts: [
      w(owner, true),
      collectionMint === null ? r(TM) : w(metadataPda(collectionMint)[0]),
      w(metadataPda(item)[0]),
      w(editionPda(item)[0]),
      w(item),
      w(associatedTokenAddress(owner, item)),
      r(TM),
      r(TM),
      r(TM),
      r(TM),
      r(TM),
      r(SYSTEM),
      r(SYSVAR_INSTRUCTIONS),
      r(TOKEN),
    ],
    data: Buffer.concat([Buffer.from([41, 0]), u64(1n)]),
  };
}

/** Bubblegum verify_collection / unverify_collection of a leaf, with its current metadata (`message`). */
export function compressedSetCollection(
  tree: Uint8Array,
  owner: Uint8Array,
  payer: Uint8Array,
  c: CollectionRefs,
  p: LeafProof,
  message: MetadataArgs,
  verify: boolean,
): Instruction {
  return {
    program: BGUM,
    accounts: [
      r(treeConfigPda(tree)),
      r(owner),
      r(owner),
      w(tree),
      r(payer, true),
      r(payer),
      r(c.authority, true),
      r(c.delegated ? collectionAuthorityRecordPda(c.mint, c.authority)[0] : BGUM),
      r(c.mint),
      w(metadataPda(c.mint)[0]),
      r(editionPda(c.mint)[0]),
      r(BUBBLEGUM_SIGNER),
      r(NOOP),
      r(COMPRESSION),
      r(TM),
      r(SYSTEM),
      ...p.proof.map((n) => r(n)),
    ],
    data: Buffer.concat([
      anchorDiscriminator("global", verify ? "verify_collection" : "unverify_collection"),
      leafArgs(p),
      encodeMetadataArgs(message),
    ]),
  };
}
