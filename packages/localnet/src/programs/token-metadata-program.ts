/**
 * The emulated Token Metadata program (metaqbxx...): the instructions that make and change collection
 * membership, with the real instruction encodings (one-byte discriminators, Borsh arguments), account
 * orders, checks that decide membership (PDAs, signers, the collection authority or its delegate
 * record, the sized collection's count) and account layouts (Metadata, MasterEditionV2).
 *
 * Covered: CreateMetadataAccountV3 (33), CreateMasterEditionV3 (17), VerifyCollection (18),
 * UnverifyCollection (22), VerifySizedCollectionItem (30), UnverifySizedCollectionItem (31),
 * Verify / Unverify with CollectionV1 (52 / 53), BurnNft (29), Burn (41, BurnArgs::V1, non-programmable
 * NFTs), and BubblegumSetCollectionSize (36, the
 * call Bubblegum makes). Any other instruction fails (`Custom(0)`, logged as not emulated). The errors carry
 * the program's names; their numbers and the log texts were not compared with the program's, and compute
 * units are the stand-in's, not the program's.
 */
import bs58 from "bs58";
import { findProgramAddressSync } from "../world/pda.ts";
import {
  decodeMetadata,
  encodeMetadata,
  MAX_NAME_LENGTH,
  MAX_SYMBOL_LENGTH,
  MAX_URI_LENGTH,
  METADATA_ACCOUNT_SIZE,
  METADATA_KEY,
  padNul,
  TokenStandard,
  type TokenMetadata,
} from "../world/token-metadata.ts";
import { decodeMint, decodeTokenAccount, encodeMint } from "../world/spl-token-layout.ts";
import { BUBBLEGUM_PROGRAM, TOKEN_METADATA_PROGRAM, TOKEN_PROGRAM } from "../accounts/program-ids.ts";
import { borshReader, type BorshReader } from "./borsh-reader.ts";
import { ProgramError, type AccountRef, type InvokeContext, type ProgramHandler } from "./emulated-programs.ts";

const PROGRAM_BYTES = bs58.decode(TOKEN_METADATA_PROGRAM);
const METADATA_SEED = Buffer.from("metadata");
const EDITION_SEED = Buffer.from("edition");
const COLLECTION_AUTHORITY_SEED = Buffer.from("collection_authority");
/** `Key::MasterEditionV2`, `Key::CollectionAuthorityRecord`. */
export const MASTER_EDITION_V2_KEY = 6;
export const COLLECTION_AUTHORITY_RECORD_KEY = 9;
/** `MAX_MASTER_EDITION_LEN`. */
export const MASTER_EDITION_SIZE = 282;
/** key, bump, update_authority Option<Pubkey>. */
export const COLLECTION_AUTHORITY_RECORD_SIZE = 35;

/** MetadataError codes used here (the program's `error.rs` numbering). */
const E = {
  InstructionUnpackError: 0,
  AlreadyInitialized: 3,
  Uninitialized: 4,
  InvalidMetadataKey: 5,
  InvalidEditionKey: 6,
  UpdateAuthorityIncorrect: 7,
  UpdateAuthorityIsNotSigner: 8,
  NotMintAuthority: 9,
  NameTooLong: 11,
  SymbolTooLong: 12,
  UriTooLong: 13,
  MintMismatch: 15,
  EditionsMustHaveExactlyOneToken: 16,
  InvalidBasisPoints: 39,
  IncorrectOwner: 57,
  CollectionNotFound: 74,
  CollectionMustBeAUniqueMasterEdition: 76,
  CannotVerifyAnotherCreator: 54,
  InvalidCollectionUpdateAuthority: 81,
  InvalidCollectionSizeChange: 113,
  SizedCollection: 102,
  UnsizedCollection: 103,
  AlreadyVerified: 83,
  AlreadyUnverified: 84,
  NotAMemberOfCollection: 110,
  CollectionCannotBeVerifiedInThisInstruction: 78,
  InvalidOwner: 58,
  MissingCollectionMetadata: 117,
  NotEmulated: 0,
} as const;

const fail = (code: number, message: string): never => {
  throw new ProgramError(code, message);
};

export function metadataPda(mint: Uint8Array): [Uint8Array, number] {
  return findProgramAddressSync([METADATA_SEED, PROGRAM_BYTES, mint], PROGRAM_BYTES);
}
export function editionPda(mint: Uint8Array): [Uint8Array, number] {
  return findProgramAddressSync([METADATA_SEED, PROGRAM_BYTES, mint, EDITION_SEED], PROGRAM_BYTES);
}
export function collectionAuthorityRecordPda(collectionMint: Uint8Array, delegate: Uint8Array): [Uint8Array, number] {
  return findProgramAddressSync(
    [METADATA_SEED, PROGRAM_BYTES, collectionMint, COLLECTION_AUTHORITY_SEED, delegate],
    PROGRAM_BYTES,
  );
}

/** MasterEditionV2 bytes: key, supply u64, max_supply Option<u64>, zero-padded to 282. */
export function encodeMasterEdition(supply: bigint, maxSupply: bigint | null): Uint8Array {
  const out = Buffer.alloc(MASTER_EDITION_SIZE);
  out[0] = MASTER_EDITION_V2_KEY;
  out.writeBigUInt64LE(supply, 1);
  if (maxSupply !== null) {
    out[9] = 1;
    out.writeBigUInt64LE(maxSupply, 10);
  }
  return new Uint8Array(out);
}

/** CollectionAuthorityRecord bytes: key, bump, Some(update authority). */
export function encodeCollectionAuthorityRecord(bump: number, updateAuthority: Uint8Array): Uint8Array {
  const out = new Uint8Array(COLLECTION_AUTHORITY_RECORD_SIZE);
  out[0] = COLLECTION_AUTHORITY_RECORD_KEY;
  out[1] = bump;
  out[2] = 1;
  out.set(updateAuthority, 3);
  return out;
}

const same = (a: Uint8Array, b: Uint8Array) => Buffer.compare(a, b) === 0;

/** An optional account of the newer instructions: absent when it is the program id itself. */
function optional(ref: AccountRef | undefined): AccountRef | undefined {
  return ref === undefined || ref.key === TOKEN_METADATA_PROGRAM ? undefined : ref;
}

function account(ctx: InvokeContext, i: number): AccountRef {
  return ctx.accounts[i] ?? fail(E.InstructionUnpackError, "Not enough account keys");
}

/** A metadata account owned by the program, decoded. */
function readMetadata(ctx: InvokeContext, ref: AccountRef): TokenMetadata {
  const state = ctx.read(ref.key);
  if (state === null || state.data.length === 0) fail(E.Uninitialized, "Uninitialized");
  if (state!.owner !== TOKEN_METADATA_PROGRAM) fail(E.IncorrectOwner, "Incorrect account owner");
  if (state!.data[0] !== METADATA_KEY) fail(E.InvalidMetadataKey, "Invalid metadata key");
  return decodeMetadata(state!.data);
}

function writeMetadata(ctx: InvokeContext, ref: AccountRef, metadata: TokenMetadata): void {
  const state = ctx.read(ref.key)!;
  ctx.write(ref, { ...state, data: encodeMetadata(metadata) });
}

/** Creates a program-owned PDA account as the program does: transfer, allocate, assign (System calls). */
function createPdaAccount(
  ctx: InvokeContext,
  payer: AccountRef,
  target: AccountRef,
  system: AccountRef,
  size: number,
  data: Uint8Array,
): void {
  const existing = ctx.read(target.key);
  if (existing !== null && existing.data.length > 0) fail(E.AlreadyInitialized, "Already initialized");
  const lamports = ctx.rentExempt(size);
  const current = existing?.lamports ?? 0n;
  const payerState = ctx.read(payer.key);
  if (payerState === null) fail(1, "Transfer: insufficient lamports");
  const signedTarget = { ...target, signer: true };
  if (lamports > current) {
    const transfer = Buffer.alloc(12);
    transfer.writeUInt32LE(2, 0);
    transfer.writeBigUInt64LE(lamports - current, 4);
    ctx.invoke(system, [payer, signedTarget], transfer, () => {
      if (payerState!.lamports < lamports - current) fail(1, "Transfer: insufficient lamports");
      ctx.write(payer, { ...payerState!, lamports: payerState!.lamports - (lamports - current) });
    });
  }
  const allocate = Buffer.alloc(12);
  allocate.writeUInt32LE(8, 0);
  allocate.writeBigUInt64LE(BigInt(size), 4);
  ctx.invoke(system, [signedTarget], allocate, () => {});
  ctx.invoke(system, [signedTarget], Buffer.concat([Buffer.from([1, 0, 0, 0]), PROGRAM_BYTES]), () => {});
  const out = new Uint8Array(size);
  out.set(data);
  ctx.write(target, {
    lamports: lamports > current ? lamports : current,
    data: out,
    owner: TOKEN_METADATA_PROGRAM,
    executable: false,
    rentEpoch: 0xffff_ffff_ffff_ffffn,
  });
}

/** The collection's authority: its update authority signing, or a delegate with a collection authority record. */
function assertCollectionAuthority(
  ctx: InvokeContext,
  authority: AccountRef,
  collection: TokenMetadata,
  collectionMint: AccountRef,
  record: AccountRef | undefined,
): void {
  if (!authority.signer) fail(E.UpdateAuthorityIsNotSigner, "Update Authority needs to be signer to update metadata");
  if (record === undefined) {
    if (authority.key !== collection.updateAuthority)
      fail(E.InvalidCollectionUpdateAuthority, "Invalid collection update authority");
    return;
  }
  const [expected] = collectionAuthorityRecordPda(collectionMint.bytes, authority.bytes);
  const state = ctx.read(record.key);
  if (
    !same(expected, record.bytes) ||
    state === null ||
    state.owner !== TOKEN_METADATA_PROGRAM ||
    state.data[0] !== COLLECTION_AUTHORITY_RECORD_KEY
  )
    fail(E.InvalidCollectionUpdateAuthority, "Invalid collection update authority");
  const recorded = state!.data[2] === 1 ? bs58.encode(state!.data.subarray(3, 35)) : null;
  if (recorded !== null && recorded !== collection.updateAuthority)
    fail(E.InvalidCollectionUpdateAuthority, "Invalid collection update authority");
}

/** The collection parent: its metadata (PDA of the mint) and master edition (PDA, MasterEditionV2). */
function readCollectionParent(
  ctx: InvokeContext,
  collectionMint: AccountRef,
  collectionMetadata: AccountRef,
  edition: AccountRef | undefined,
): TokenMetadata {
  if (!same(metadataPda(collectionMint.bytes)[0], collectionMetadata.bytes))
    fail(E.MintMismatch, "Mint given does not match mint on Metadata");
  const parent = readMetadata(ctx, collectionMetadata);
  if (parent.mint !== collectionMint.key) fail(E.MintMismatch, "Mint given does not match mint on Metadata");
  if (edition !== undefined) {
    const state = ctx.read(edition.key);
    if (
      !same(editionPda(collectionMint.bytes)[0], edition.bytes) ||
      state === null ||
      state.owner !== TOKEN_METADATA_PROGRAM ||
      state.data[0] !== MASTER_EDITION_V2_KEY
    )
      fail(E.CollectionMustBeAUniqueMasterEdition, "Collection Must Be a Unique Master Edition v2");
  }
  return parent;
}

function changeSize(ctx: InvokeContext, ref: AccountRef, parent: TokenMetadata, delta: 1n | -1n): void {
  if (parent.collectionDetails?.__kind !== "V1") return;
  const size = parent.collectionDetails.size + delta;
  if (size < 0n) fail(E.InvalidCollectionSizeChange, "Invalid collection size change");
  writeMetadata(ctx, ref, { ...parent, collectionDetails: { __kind: "V1", size } });
}

/** Verify or unverify an item's collection; `sized`: the instruction is the sized variant (true/false) or either (null). */
function setVerified(
  ctx: InvokeContext,
  refs: {
    metadata: AccountRef;
    authority: AccountRef;
    collectionMint: AccountRef;
    collectionMetadata: AccountRef;
    edition: AccountRef | undefined;
    record: AccountRef | undefined;
  },
  verify: boolean,
  sized: boolean | null,
): void {
  const item = readMetadata(ctx, refs.metadata);
  const parent = readCollectionParent(ctx, refs.collectionMint, refs.collectionMetadata, refs.edition);
  if (item.collection === null) fail(E.CollectionNotFound, "Collection Not Found on Metadata");
  if (item.collection!.key !== refs.collectionMint.key)
    fail(E.NotAMemberOfCollection, "This NFT is not a member of the specified collection.");
  assertCollectionAuthority(ctx, refs.authority, parent, refs.collectionMint, refs.record);
  const isSized = parent.collectionDetails !== null;
  if (sized === true && !isSized) fail(E.UnsizedCollection, "Can't use this function on an unsized collection");
  if (sized === false && isSized) fail(E.SizedCollection, "Can't use this function on a sized collection");
  if (item.collection!.verified === verify)
    fail(verify ? E.AlreadyVerified : E.AlreadyUnverified, verify ? "Already verified" : "Already unverified");
  // The item first, then the parent: both may be the same account only for a self-referencing collection.
  writeMetadata(ctx, refs.metadata, { ...item, collection: { ...item.collection!, verified: verify } });
  if (isSized && refs.collectionMetadata.key !== refs.metadata.key) {
    if (!refs.collectionMetadata.writable) fail(E.InvalidCollectionSizeChange, "Collection metadata is not writable");
    changeSize(ctx, refs.collectionMetadata, parent, verify ? 1n : -1n);
  }
}

interface DataV2 {
  name: string;
  symbol: string;
  uri: string;
  sellerFeeBasisPoints: number;
  creators: { address: string; verified: boolean; share: number }[] | null;
  collection: { verified: boolean; key: string } | null;
  uses: { useMethod: number; remaining: bigint; total: bigint } | null;
}

function readDataV2(r: BorshReader): DataV2 {
  return {
    name: r.string(),
    symbol: r.string(),
    uri: r.string(),
    sellerFeeBasisPoints: r.u16(),
    creators: r.option(() => r.vec(() => ({ address: r.pubkey(), verified: r.bool(), share: r.u8() }))),
    collection: r.option(() => ({ verified: r.bool(), key: r.pubkey() })),
    uses: r.option(() => ({ useMethod: r.u8(), remaining: r.u64(), total: r.u64() })),
  };
}

function createMetadataAccountV3(ctx: InvokeContext): void {
  ctx.log("IX: Create Metadata Accounts v3");
  const metadata = account(ctx, 0);
  const mint = account(ctx, 1);
  const mintAuthority = account(ctx, 2);
  const payer = account(ctx, 3);
  const updateAuthority = account(ctx, 4);
  const system = account(ctx, 5);
  const r = borshReader(ctx.data, 1, E.InstructionUnpackError);
  const data = readDataV2(r);
  const isMutable = r.bool();
  const details = r.option(() => {
    const kind = r.u8();
    if (kind === 0) return { __kind: "V1" as const, size: r.u64() };
    return fail(E.InstructionUnpackError, "Unsupported collection details");
  });
  if (!same(metadataPda(mint.bytes)[0], metadata.bytes)) fail(E.InvalidMetadataKey, "Invalid metadata key");
  const mintState = ctx.read(mint.key);
  const mintFields = mintState?.owner === TOKEN_PROGRAM ? decodeMint(mintState.data) : null;
  if (mintFields === null) fail(E.IncorrectOwner, "Incorrect account owner");
  if (
    !mintAuthority.signer ||
    mintFields!.mintAuthority === null ||
    !same(mintFields!.mintAuthority, mintAuthority.bytes)
  )
    fail(E.NotMintAuthority, "You must be the mint authority and signer on this transaction");
  if (Buffer.byteLength(data.name) > MAX_NAME_LENGTH) fail(E.NameTooLong, "Name too long");
  if (Buffer.byteLength(data.symbol) > MAX_SYMBOL_LENGTH) fail(E.SymbolTooLong, "Symbol too long");
  if (Buffer.byteLength(data.uri) > MAX_URI_LENGTH) fail(E.UriTooLong, "URI too long");
  if (data.sellerFeeBasisPoints > 10_000) fail(E.InvalidBasisPoints, "Basis points cannot be more than 10000");
  for (const creator of data.creators ?? [])
    if (creator.verified && !(creator.address === updateAuthority.key && updateAuthority.signer))
      fail(E.CannotVerifyAnotherCreator, "You cannot unilaterally verify another creator, they must sign");
  // A collection can only be verified by a verify instruction, signed by its authority.
  if (data.collection?.verified === true)
    fail(E.CollectionCannotBeVerifiedInThisInstruction, "Collection cannot be verified in this instruction");
  const [, editionBump] = editionPda(mint.bytes);
  const record: TokenMetadata = {
    key: METADATA_KEY,
    updateAuthority: updateAuthority.key as TokenMetadata["updateAuthority"],
    mint: mint.key as TokenMetadata["mint"],
    name: padNul(data.name, MAX_NAME_LENGTH),
    symbol: padNul(data.symbol, MAX_SYMBOL_LENGTH),
    uri: padNul(data.uri, MAX_URI_LENGTH),
    sellerFeeBasisPoints: data.sellerFeeBasisPoints,
    creators: data.creators as TokenMetadata["creators"],
    primarySaleHappened: false,
    isMutable,
    editionNonce: editionBump,
    tokenStandard: mintFields!.decimals === 0 ? TokenStandard.FungibleAsset : TokenStandard.Fungible,
    collection: data.collection as TokenMetadata["collection"],
    uses: data.uses,
    // A new collection starts empty, whatever size the caller names.
    collectionDetails: details === null ? null : { __kind: "V1", size: 0n },
    programmableConfig: null,
  };
  createPdaAccount(ctx, payer, metadata, system, METADATA_ACCOUNT_SIZE, encodeMetadata(record));
}

function createMasterEditionV3(ctx: InvokeContext): void {
  ctx.log("IX: Create Master Edition v3");
  const edition = account(ctx, 0);
  const mint = account(ctx, 1);
  const updateAuthority = account(ctx, 2);
  const mintAuthority = account(ctx, 3);
  const payer = account(ctx, 4);
  const metadataRef = account(ctx, 5);
  const tokenProgram = account(ctx, 6);
  const system = account(ctx, 7);
  const r = borshReader(ctx.data, 1, E.InstructionUnpackError);
  const maxSupply = r.option(() => r.u64());
  if (!same(editionPda(mint.bytes)[0], edition.bytes)) fail(E.InvalidEditionKey, "Invalid edition key");
  if (!same(metadataPda(mint.bytes)[0], metadataRef.bytes)) fail(E.InvalidMetadataKey, "Invalid metadata key");
  const metadata = readMetadata(ctx, metadataRef);
  if (!updateAuthority.signer)
    fail(E.UpdateAuthorityIsNotSigner, "Update Authority needs to be signer to update metadata");
  if (metadata.updateAuthority !== updateAuthority.key)
    fail(E.UpdateAuthorityIncorrect, "Update Authority given does not match");
  const mintState = ctx.read(mint.key);
  const mintFields = mintState?.owner === TOKEN_PROGRAM ? decodeMint(mintState.data) : null;
  if (mintFields === null) fail(E.IncorrectOwner, "Incorrect account owner");
  if (
    !mintAuthority.signer ||
    mintFields!.mintAuthority === null ||
    !same(mintFields!.mintAuthority, mintAuthority.bytes)
  )
    fail(E.NotMintAuthority, "You must be the mint authority and signer on this transaction");
  if (mintFields!.decimals !== 0 || mintFields!.supply !== 1n)
    fail(E.EditionsMustHaveExactlyOneToken, "Editions must have exactly one token");
  createPdaAccount(ctx, payer, edition, system, MASTER_EDITION_SIZE, encodeMasterEdition(0n, maxSupply));
  // The mint's authorities go to the edition (SPL Token SetAuthority, signed by the current authority).
  const setAuthority = (type: number) => Buffer.concat([Buffer.from([6, type, 1]), edition.bytes]);
  let fields = mintFields!;
  ctx.invoke(tokenProgram, [mint, mintAuthority], setAuthority(0), () => {
    fields = { ...fields, mintAuthority: edition.bytes };
  });
  if (fields.freezeAuthority !== null)
    ctx.invoke(tokenProgram, [mint, mintAuthority], setAuthority(1), () => {
      fields = { ...fields, freezeAuthority: edition.bytes };
    });
  ctx.write(mint, { ...mintState!, data: encodeMint(fields) });
  writeMetadata(ctx, metadataRef, { ...metadata, tokenStandard: TokenStandard.NonFungible });
}

function burnNft(ctx: InvokeContext): void {
  ctx.log("IX: Burn NFT");
  burnItem(ctx, {
    metadata: account(ctx, 0),
    owner: account(ctx, 1),
    mint: account(ctx, 2),
    tokenAccount: account(ctx, 3),
    edition: account(ctx, 4),
    tokenProgram: account(ctx, 5),
    collectionMetadata: ctx.accounts[6],
  });
}

/**
 * Burn (41) with BurnArgs::V1 for a non-programmable NFT: authority, collection_metadata (optional),
 * metadata, edition, mint, token, then the print-edition, token-record, system, sysvar and SPL Token accounts.
 */
function burnV1(ctx: InvokeContext): void {
  ctx.log("IX: Burn");
  const r = borshReader(ctx.data, 1, E.InstructionUnpackError);
  if (r.u8() !== 0) fail(E.InstructionUnpackError, "Unsupported burn arguments");
  if (r.u64() !== 1n) fail(E.EditionsMustHaveExactlyOneToken, "Not enough tokens");
  const metadata = readMetadata(ctx, account(ctx, 2));
  if (metadata.tokenStandard === TokenStandard.ProgrammableNonFungible)
    fail(E.NotEmulated, "the localnet's Token Metadata emulation does not burn programmable NFTs");
  burnItem(ctx, {
    metadata: account(ctx, 2),
    owner: account(ctx, 0),
    mint: account(ctx, 4),
    tokenAccount: account(ctx, 5),
    edition: optional(ctx.accounts[3]) ?? fail(E.InvalidEditionKey, "Invalid edition key"),
    tokenProgram: account(ctx, 13),
    collectionMetadata: optional(ctx.accounts[1]),
  });
}

/** Burns an NFT held by `owner`: the token burnt and its account closed, metadata and edition closed to the owner. */
function burnItem(
  ctx: InvokeContext,
  refs: {
    metadata: AccountRef;
    owner: AccountRef;
    mint: AccountRef;
    tokenAccount: AccountRef;
    edition: AccountRef;
    tokenProgram: AccountRef;
    collectionMetadata: AccountRef | undefined;
  },
): void {
  const { metadata: metadataRef, owner, mint, tokenAccount, edition, tokenProgram, collectionMetadata } = refs;
  if (!owner.signer) fail(E.InvalidOwner, "Owner must sign");
  if (!same(metadataPda(mint.bytes)[0], metadataRef.bytes)) fail(E.InvalidMetadataKey, "Invalid metadata key");
  const metadata = readMetadata(ctx, metadataRef);
  const tokenState = ctx.read(tokenAccount.key);
  const token = tokenState?.owner === TOKEN_PROGRAM ? decodeTokenAccount(tokenState.data) : null;
  if (token === null || !same(token.mint, mint.bytes))
    fail(E.MintMismatch, "Mint given does not match mint on Metadata");
  if (!same(token!.owner, owner.bytes)) fail(E.InvalidOwner, "Invalid Owner");
  if (token!.amount !== 1n) fail(E.EditionsMustHaveExactlyOneToken, "Not enough tokens");
  const editionState = ctx.read(edition.key);
  if (
    !same(editionPda(mint.bytes)[0], edition.bytes) ||
    editionState === null ||
    editionState.data[0] !== MASTER_EDITION_V2_KEY
  )
    fail(E.InvalidEditionKey, "Invalid edition key");
  // A verified member of a sized collection leaves its count: the collection's metadata must be given.
  let parent: TokenMetadata | null = null;
  if (metadata.collection?.verified === true) {
    if (collectionMetadata === undefined) fail(E.MissingCollectionMetadata, "Missing collection metadata");
    parent = readMetadata(ctx, collectionMetadata!);
    if (parent.mint !== metadata.collection.key)
      fail(E.NotAMemberOfCollection, "This NFT is not a member of the specified collection.");
  }
  const mintState = ctx.read(mint.key)!;
  const mintFields = decodeMint(mintState.data)!;
  const burn = Buffer.alloc(9);
  burn[0] = 8;
  burn.writeBigUInt64LE(1n, 1);
  ctx.invoke(tokenProgram, [tokenAccount, mint, owner], burn, () => {
    ctx.write(mint, { ...mintState, data: encodeMint({ ...mintFields, supply: mintFields.supply - 1n }) });
  });
  let ownerState = ctx.read(owner.key)!;
  ctx.invoke(tokenProgram, [tokenAccount, owner, owner], Uint8Array.of(9), () => {
    ownerState = { ...ownerState, lamports: ownerState.lamports + tokenState!.lamports };
    ctx.write(tokenAccount, null);
  });
  // The metadata and edition accounts close to the owner.
  ownerState = {
    ...ownerState,
    lamports: ownerState.lamports + ctx.read(metadataRef.key)!.lamports + editionState!.lamports,
  };
  ctx.write(metadataRef, null);
  ctx.write(edition, null);
  ctx.write(owner, ownerState);
  if (parent !== null && collectionMetadata !== undefined) changeSize(ctx, collectionMetadata, parent, -1n);
}

/** BubblegumSetCollectionSize: only Bubblegum's signer PDA may call it. */
function bubblegumSetCollectionSize(ctx: InvokeContext): void {
  ctx.log("IX: Bubblegum Set Collection Size");
  const collectionMetadata = account(ctx, 0);
  const authority = account(ctx, 1);
  const collectionMint = account(ctx, 2);
  const signer = account(ctx, 3);
  const record = ctx.accounts[4];
  const r = borshReader(ctx.data, 1, E.InstructionUnpackError);
  const size = r.u64();
  const [expected] = findProgramAddressSync([Buffer.from("collection_cpi")], bs58.decode(BUBBLEGUM_PROGRAM));
  if (!signer.signer || !same(expected, signer.bytes)) fail(E.InvalidCollectionSizeChange, "Invalid Bubblegum signer");
  const parent = readCollectionParent(ctx, collectionMint, collectionMetadata, undefined);
  assertCollectionAuthority(ctx, authority, parent, collectionMint, record);
  if (parent.collectionDetails === null) fail(E.UnsizedCollection, "Can't use this function on an unsized collection");
  writeMetadata(ctx, collectionMetadata, { ...parent, collectionDetails: { __kind: "V1", size } });
}

const VERIFICATION_COLLECTION_V1 = 1;

/** The handler, by discriminator. */
export const tokenMetadataProgram: ProgramHandler = (ctx) => {
  const discriminator = ctx.data[0];
  const a = (i: number) => account(ctx, i);
  switch (discriminator) {
    case 33:
      return createMetadataAccountV3(ctx);
    case 17:
      return createMasterEditionV3(ctx);
    case 18:
    case 30:
      ctx.log(discriminator === 18 ? "IX: Verify Collection" : "IX: Verify Collection V3");
      return setVerified(
        ctx,
        {
          metadata: a(0),
          authority: a(1),
          collectionMint: a(3),
          collectionMetadata: a(4),
          edition: a(5),
          record: ctx.accounts[6],
        },
        true,
        discriminator === 30,
      );
    case 22:
      ctx.log("IX: Unverify Collection");
      return setVerified(
        ctx,
        {
          metadata: a(0),
          authority: a(1),
          collectionMint: a(2),
          collectionMetadata: a(3),
          edition: a(4),
          record: ctx.accounts[5],
        },
        false,
        false,
      );
    case 31:
      ctx.log("IX: Unverify Sized Collection Item");
      return setVerified(
        ctx,
        {
          metadata: a(0),
          authority: a(1),
          collectionMint: a(3),
          collectionMetadata: a(4),
          edition: a(5),
          record: ctx.accounts[6],
        },
        false,
        true,
      );
    case 52:
    case 53: {
      const verify = discriminator === 52;
      ctx.log(verify ? "IX: Verify" : "IX: Unverify");
      if (ctx.data[1] !== VERIFICATION_COLLECTION_V1)
        fail(E.NotEmulated, "the localnet's Token Metadata emulation covers Verify/Unverify for CollectionV1 only");
      return setVerified(
        ctx,
        {
          metadata: a(2),
          authority: a(0),
          collectionMint: a(3),
          collectionMetadata: a(4),
          edition: verify ? optional(ctx.accounts[5]) : undefined,
          record: optional(ctx.accounts[1]),
        },
        verify,
        null,
      );
    }
    case 29:
      return burnNft(ctx);
    case 41:
      return burnV1(ctx);
    case 36:
      return bubblegumSetCollectionSize(ctx);
    default:
      return fail(E.NotEmulated, `the localnet's Token Metadata emulation does not cover instruction ${discriminator}`);
  }
};
