/**
 * Collection traffic: real signed transactions that change the world's collection ("Solgate
 * Sentinels") through the emulated Token Metadata and Bubblegum programs (programs/), so a feed that
 * follows the blocks sees members come and go:
 *
 * - verified classic mints (mint, token account, CreateMetadataAccountV3 naming the collection,
 *   CreateMasterEditionV3, VerifySizedCollectionItem signed by the collection's delegate);
 * - spoofed mints naming the collection, never verified (and now and then a spoofer's verify attempt,
 *   which fails on chain and takes its whole transaction with it);
 * - transfers (SPL Token) and burns (BurnNft or Burn V1) of the items it minted; unverify and verify of them;
 * - compressed mints into the collection (mint_to_collection_v1 on the traffic's tree), their transfers,
 *   burns, unverify and verify (proofs from the tree as an indexer keeps it).
 *
 * Deterministic from the seed: one draw per slot picks the next operation from what the traffic knows
 * has landed; a transaction is only built on an item with nothing in flight, and the model moves when
 * the block that carries its transaction is produced (a failed one leaves it as it was).
 *
 * The collection's authority is not a key anyone holds (the world derives it), so, as a real project
 * would, the traffic signs as a collection delegate: a CollectionAuthorityRecord for the traffic's keeper
 * is written at start, with the collection's master edition (which the world does not seed and every
 * verify instruction reads) and the traffic's Bubblegum tree (TreeConfig and an empty tree account).
 */
import bs58 from "bs58";
import { BUBBLEGUM_PROGRAM, SYSTEM_PROGRAM, TOKEN_METADATA_PROGRAM, TOKEN_PROGRAM } from "../accounts/program-ids.ts";
import {
  ACCOUNT_COMPRESSION_PROGRAM,
  assetIdOf,
  encodeTreeConfig,
  TREE_CONFIG_SIZE,
  treeConfigPda,
  type BubblegumState,
  type MetadataArgs,
} from "../programs/bubblegum-program.ts";
import { createMerkleTree } from "../programs/merkle-tree.ts";
import {
  collectionAuthorityRecordPda,
  COLLECTION_AUTHORITY_RECORD_SIZE,
  editionPda,
  encodeCollectionAuthorityRecord,
  encodeMasterEdition,
  MASTER_EDITION_SIZE,
} from "../programs/token-metadata-program.ts";
import { associatedTokenAddress } from "../world/program-ids.ts";
import { createRandom, deriveKey, deriveKeypair, type SeededKeypair } from "../world/seeded-random.ts";
import type { WorldAccount } from "../world/world-types.ts";
import { COLLECTION_SYMBOL } from "../world/generated-collection.ts";
import {
  burnNft,
  burnV1,
  compressedBurn,
  compressedSetCollection,
  compressedTransfer,
  createAccount,
  createAssociatedTokenIdempotent,
  createMasterEditionV3,
  createMetadataAccountV3,
  initializeMint2,
  MINT_SIZE,
  mintTo,
  mintToCollectionV1,
  tokenTransfer,
  verifyCollectionV1,
  verifySizedCollectionItem,
  type CollectionRefs,
} from "./collection-instructions.ts";
import { buildSignedTransaction, type Instruction } from "./signed-transaction.ts";

const WALLET_LAMPORTS = 1_000_000_000_000n;
const MINT_RENT = 1_461_600n;
export const TREE_DEPTH = 14;
export const TREE_BUFFER = 64;
/** As real trees keep one, so a proof fits a transaction: 3 nodes of 14 in the remaining accounts. */
export const TREE_CANOPY = 11;
/** Blocks after which a transaction that never landed is given up (its blockhash has expired by then). */
const GIVE_UP_BLOCKS = 160;

export interface CollectionTrafficOptions {
  /** The world's seed (the collection's addresses) and the traffic's (its keys and draws). */
  worldSeed: string;
  seed: string;
  /** Chance per slot of a new operation (at most one per slot). */
  opsPerSlot: number;
  holders: number;
}

export const DEFAULT_COLLECTION_TRAFFIC: Omit<CollectionTrafficOptions, "worldSeed" | "seed"> = {
  opsPerSlot: 0.5,
  holders: 6,
};

/** Keys and accounts of the collection traffic, fixed by the seeds. */
export interface CollectionTrafficPlan {
  collectionMint: Uint8Array;
  collectionAuthority: string;
  keeper: SeededKeypair;
  spoofer: SeededKeypair;
  holders: SeededKeypair[];
  tree: Uint8Array;
  accounts: WorldAccount[];
}

export function planCollectionTraffic(
  options: CollectionTrafficOptions,
  rentExempt: (size: number) => bigint,
): CollectionTrafficPlan {
  const collectionMint = deriveKey(options.worldSeed, "collection/mint");
  const collectionAuthority = deriveKey(options.worldSeed, "collection/update-authority");
  const keeper = deriveKeypair(options.seed, "traffic/collection-keeper");
  const spoofer = deriveKeypair(options.seed, "traffic/collection-spoofer");
  const holders = Array.from({ length: options.holders }, (_, i) =>
    deriveKeypair(options.seed, "traffic/nft-holder", i),
  );
  const tree = deriveKey(options.seed, "traffic/merkle-tree");
  const [record, recordBump] = collectionAuthorityRecordPda(collectionMint, keeper.publicKey);
  const system = (k: SeededKeypair): WorldAccount => ({
    address: k.address,
    owner: SYSTEM_PROGRAM,
    lamports: WALLET_LAMPORTS,
    data: new Uint8Array(0),
    executable: false,
  });
  const owned = (address: Uint8Array, owner: string, data: Uint8Array): WorldAccount => ({
    address: bs58.encode(address),
    owner,
    lamports: rentExempt(data.length),
    data,
    executable: false,
  });
  // The empty tree as init_empty_merkle_tree leaves it, its authority the tree config.
  const treeData = createMerkleTree(TREE_DEPTH, TREE_BUFFER, TREE_CANOPY).accountData(treeConfigPda(tree), 0n);
  return {
    collectionMint,
    collectionAuthority: bs58.encode(collectionAuthority),
    keeper,
    spoofer,
    holders,
    tree,
    accounts: [
      system(keeper),
      system(spoofer),
      ...holders.map(system),
      // Written as ApproveCollectionAuthority would have: the keeper may verify into the collection.
      owned(
        record,
        TOKEN_METADATA_PROGRAM,
        encodeCollectionAuthorityRecord(recordBump, collectionAuthority).slice(0, COLLECTION_AUTHORITY_RECORD_SIZE),
      ),
      // The collection NFT's master edition (a one-of-one: max supply 0), which verify instructions read.
      owned(
        editionPda(collectionMint)[0],
        TOKEN_METADATA_PROGRAM,
        encodeMasterEdition(0n, 0n).slice(0, MASTER_EDITION_SIZE),
      ),
      owned(
        treeConfigPda(tree),
        BUBBLEGUM_PROGRAM,
        encodeTreeConfig({
          creator: keeper.publicKey,
          delegate: keeper.publicKey,
          capacity: 1n << BigInt(TREE_DEPTH),
          minted: 0n,
          isPublic: false,
        }).slice(0, TREE_CONFIG_SIZE),
      ),
      owned(tree, ACCOUNT_COMPRESSION_PROGRAM, treeData),
    ],
  };
}

interface Item {
  kind: "classic" | "compressed" | "spoof";
  /** Mint, or asset id. */
  id: string;
  mint: Uint8Array;
  holder: number;
  verified: boolean;
  burnt: boolean;
  inFlight: boolean;
}

/** What the traffic meant by one transaction, applied to its model once the transaction lands. */
interface Pending {
  label: string;
  sentAt: number;
  apply(): void;
  /** Undoes the in-flight marks when the transaction failed or never landed. */
  release(): void;
}

export interface CollectionTrafficStats {
  sent: Record<string, number>;
  landed: Record<string, number>;
  failed: Record<string, number>;
}

export interface CollectionTraffic {
  /** The next slot's transactions (zero or one), built on `blockhash`. */
  next(blockhash: string): Uint8Array[];
  /** Tells the model what a produced block carried: signature and whether it failed. */
  landed(transactions: readonly { signature: string; failed: boolean }[]): void;
  readonly stats: CollectionTrafficStats;
  /** The items it minted, as it believes them now. */
  readonly items: readonly Readonly<Item>[];
}

export function createCollectionTraffic(
  plan: CollectionTrafficPlan,
  options: CollectionTrafficOptions,
  bubblegum: BubblegumState,
): CollectionTraffic {
  const random = createRandom(`${options.seed}/collection-traffic`);
  const items: Item[] = [];
  const pending = new Map<string, Pending>();
  const stats: CollectionTrafficStats = { sent: {}, landed: {}, failed: {} };
  const bump = (table: Record<string, number>, label: string) => {
    table[label] = (table[label] ?? 0) + 1;
  };
  const collection: CollectionRefs = { mint: plan.collectionMint, authority: plan.keeper.publicKey, delegated: true };
  const treeKey = bs58.encode(plan.tree);
  let blocks = 0;
  let classicCount = 0;
  let compressedCount = 0;
  let spoofCount = 0;
  let treeBusy = false;

  const holderKey = (i: number) => plan.holders[i]!;
  const pick = <T>(list: T[]): T | undefined => (list.length === 0 ? undefined : list[random.int(list.length)]);

  function classicMint(
    hash: Uint8Array,
    spoof: boolean,
    tryVerify: boolean,
  ): { wire: Uint8Array; item: Item; label: string } {
    const n = spoof ? spoofCount++ : classicCount++;
    const mintKey = deriveKeypair(options.seed, spoof ? "traffic/spoof-mint" : "traffic/nft-mint", n);
    const signer = spoof ? plan.spoofer : plan.keeper;
    const holder = random.int(plan.holders.length);
    const owner = holderKey(holder).publicKey;
    const instructions: Instruction[] = [
      createAccount(signer.publicKey, mintKey.publicKey, MINT_RENT, MINT_SIZE, bs58.decode(TOKEN_PROGRAM)),
      initializeMint2(mintKey.publicKey, signer.publicKey),
      createAssociatedTokenIdempotent(signer.publicKey, owner, mintKey.publicKey),
      mintTo(mintKey.publicKey, associatedTokenAddress(owner, mintKey.publicKey), signer.publicKey),
      createMetadataAccountV3(mintKey.publicKey, signer.publicKey, signer.publicKey, {
        name: spoof ? `Solgate Sentinel #${1 + random.int(10_000)}` : `Solgate Sentinel #T${n + 1}`,
        symbol: COLLECTION_SYMBOL,
        uri: spoof
          ? `https://assets.spoof.localnet/sentinels/t${n}.json`
          : `https://assets.solgate.localnet/sentinels/t${n + 1}.json`,
        sellerFeeBasisPoints: 500,
        creators: [{ address: signer.publicKey, verified: true, share: 100 }],
        collection: plan.collectionMint,
      }),
      createMasterEditionV3(mintKey.publicKey, signer.publicKey, signer.publicKey),
    ];
    if (!spoof) instructions.push(verifySizedCollectionItem(mintKey.publicKey, signer.publicKey, collection, true));
    // A spoofer signing a verify as if it were the collection's delegate: Token Metadata refuses it.
    else if (tryVerify)
      instructions.push(
        verifySizedCollectionItem(
          mintKey.publicKey,
          signer.publicKey,
          { ...collection, authority: signer.publicKey, delegated: false },
          true,
        ),
      );
    const item: Item = {
      kind: spoof ? "spoof" : "classic",
      id: mintKey.address,
      mint: mintKey.publicKey,
      holder,
      verified: !spoof,
      burnt: false,
      inFlight: true,
    };
    const wire = buildSignedTransaction(signer, [mintKey], instructions, hash);
    return { wire, item, label: spoof ? (tryVerify ? "spoof-verify-attempt" : "spoof-mint") : "mint" };
  }

  function compressedMint(hash: Uint8Array): { wire: Uint8Array; item: Item } | undefined {
    const tree = bubblegum.tree(treeKey);
    if (tree === undefined || treeBusy) return undefined;
    const n = compressedCount++;
    const holder = random.int(plan.holders.length);
    const metadata: MetadataArgs = {
      name: `Solgate Sentinel #C${n + 1}`,
      symbol: COLLECTION_SYMBOL,
      uri: `https://assets.solgate.localnet/sentinels/c${n + 1}.json`,
      sellerFeeBasisPoints: 500,
      primarySaleHappened: false,
      isMutable: true,
      editionNonce: null,
      tokenStandard: 0,
      collection: { verified: false, key: bs58.encode(plan.collectionMint) },
      uses: null,
      tokenProgramVersion: 0,
      creators: [{ address: plan.keeper.address, verified: false, share: 100 }],
    };
    const ix = mintToCollectionV1(
      plan.tree,
      holderKey(holder).publicKey,
      plan.keeper.publicKey,
      plan.keeper.publicKey,
      collection,
      metadata,
    );
    const wire = buildSignedTransaction(plan.keeper, [], [ix], hash);
    // Nothing else changes the tree while this is in flight: its asset takes the tree's next nonce.
    const id = assetIdOf(plan.tree, BigInt(tree.appended));
    const item: Item = {
      kind: "compressed",
      id: bs58.encode(id),
      mint: id,
      holder,
      verified: true,
      burnt: false,
      inFlight: true,
    };
    return { wire, item };
  }

  function leafProof(item: Item) {
    const tree = bubblegum.tree(treeKey);
    const leaf = bubblegum.leaf(item.id);
    if (tree === undefined || leaf === undefined || leaf.burnt) return undefined;
    const index = Number(leaf.nonce);
    return {
      root: tree.root(),
      dataHash: leaf.dataHash,
      creatorHash: leaf.creatorHash,
      nonce: leaf.nonce,
      index,
      proof: tree.proof(index).slice(0, TREE_DEPTH - TREE_CANOPY),
    };
  }

  function send(label: string, wire: Uint8Array, apply: () => void, release: () => void): Uint8Array {
    const signature = bs58.encode(wire.subarray(1, 65));
    pending.set(signature, { label, sentAt: blocks, apply, release });
    bump(stats.sent, label);
    return wire;
  }

  function nextOp(hash: Uint8Array): Uint8Array | undefined {
    const live = (kind: Item["kind"]) => items.filter((i) => i.kind === kind && !i.burnt && !i.inFlight);
    const roll = random.next();
    const classic = live("classic");
    const compressed = live("compressed");
    if (roll < 0.25 || classic.length === 0) {
      const { wire, item } = classicMint(hash, false, false);
      return send(
        "mint",
        wire,
        () => items.push({ ...item, inFlight: false }),
        () => {},
      );
    }
    if (roll < 0.35) {
      const tryVerify = random.next() < 0.3;
      const { wire, item, label } = classicMint(hash, true, tryVerify);
      return send(
        label,
        wire,
        () => items.push({ ...item, inFlight: false }),
        () => {},
      );
    }
    if (roll < 0.55) {
      if (treeBusy) return undefined;
      const made = compressedMint(hash);
      if (made === undefined) return undefined;
      treeBusy = true;
      return send(
        "compressed-mint",
        made.wire,
        () => {
          items.push({ ...made.item, inFlight: false });
          treeBusy = false;
        },
        () => {
          treeBusy = false;
        },
      );
    }
    if (roll < 0.7) {
      const item = pick(classic);
      if (item === undefined) return undefined;
      const to = (item.holder + 1 + random.int(plan.holders.length - 1)) % plan.holders.length;
      const from = holderKey(item.holder);
      const destination = holderKey(to).publicKey;
      item.inFlight = true;
      const wire = buildSignedTransaction(
        from,
        [],
        [
          createAssociatedTokenIdempotent(from.publicKey, destination, item.mint),
          tokenTransfer(
            associatedTokenAddress(from.publicKey, item.mint),
            associatedTokenAddress(destination, item.mint),
            from.publicKey,
          ),
        ],
        hash,
      );
      return send(
        "transfer",
        wire,
        () => {
          item.holder = to;
          item.inFlight = false;
        },
        () => (item.inFlight = false),
      );
    }
    if (roll < 0.78) {
      const item = pick(classic);
      if (item === undefined) return undefined;
      const owner = holderKey(item.holder);
      item.inFlight = true;
      // BurnNft (29) or Burn (41) V1, alike.
      const burn = random.next() < 0.5 ? burnNft : burnV1;
      const wire = buildSignedTransaction(
        owner,
        [],
        [burn(item.mint, owner.publicKey, item.verified ? plan.collectionMint : null)],
        hash,
      );
      return send(
        "burn",
        wire,
        () => {
          item.burnt = true;
          item.inFlight = false;
        },
        () => (item.inFlight = false),
      );
    }
    if (roll < 0.88) {
      const item = pick(classic);
      if (item === undefined) return undefined;
      item.inFlight = true;
      const verify = !item.verified;
      // Unverify with the sized instruction; verify back with either the sized one or Verify (CollectionV1).
      const ix =
        verify && random.next() < 0.5
          ? verifyCollectionV1(item.mint, collection)
          : verifySizedCollectionItem(item.mint, plan.keeper.publicKey, collection, verify);
      const wire = buildSignedTransaction(plan.keeper, [], [ix], hash);
      return send(
        verify ? "verify" : "unverify",
        wire,
        () => {
          item.verified = verify;
          item.inFlight = false;
        },
        () => (item.inFlight = false),
      );
    }
    const item = pick(compressed);
    if (item === undefined || treeBusy) return undefined;
    const proof = leafProof(item);
    if (proof === undefined) return undefined;
    const owner = holderKey(item.holder);
    item.inFlight = true;
    treeBusy = true;
    const draw = random.next();
    const leaf = bubblegum.leaf(item.id);
    if (draw < 0.25 && leaf !== undefined) {
      // Unverify a compressed member, or verify it back, with the leaf's current metadata.
      const verify = !item.verified;
      const wire = buildSignedTransaction(
        plan.keeper,
        [],
        [
          compressedSetCollection(
            plan.tree,
            owner.publicKey,
            plan.keeper.publicKey,
            collection,
            proof,
            leaf.metadata,
            verify,
          ),
        ],
        hash,
      );
      return send(
        verify ? "compressed-verify" : "compressed-unverify",
        wire,
        () => {
          item.verified = verify;
          item.inFlight = false;
          treeBusy = false;
        },
        () => {
          item.inFlight = false;
          treeBusy = false;
        },
      );
    }
    if (draw < 0.7) {
      const to = (item.holder + 1 + random.int(plan.holders.length - 1)) % plan.holders.length;
      const wire = buildSignedTransaction(
        owner,
        [],
        [compressedTransfer(plan.tree, owner.publicKey, holderKey(to).publicKey, proof)],
        hash,
      );
      return send(
        "compressed-transfer",
        wire,
        () => {
          item.holder = to;
          item.inFlight = false;
          treeBusy = false;
        },
        () => {
          item.inFlight = false;
          treeBusy = false;
        },
      );
    }
    const wire = buildSignedTransaction(owner, [], [compressedBurn(plan.tree, owner.publicKey, proof)], hash);
    return send(
      "compressed-burn",
      wire,
      () => {
        item.burnt = true;
        item.inFlight = false;
        treeBusy = false;
      },
      () => {
        item.inFlight = false;
        treeBusy = false;
      },
    );
  }

  return {
    next(blockhash) {
      blocks++;
      // Transactions that never landed: their blockhash has expired; the items are free again.
      for (const [signature, p] of pending) {
        if (blocks - p.sentAt > GIVE_UP_BLOCKS) {
          pending.delete(signature);
          p.release();
          bump(stats.failed, p.label);
        }
      }
      if (random.next() >= options.opsPerSlot) return [];
      const wire = nextOp(bs58.decode(blockhash));
      return wire === undefined ? [] : [wire];
    },
    landed(transactions) {
      for (const { signature, failed } of transactions) {
        const p = pending.get(signature);
        if (p === undefined) continue;
        pending.delete(signature);
        if (failed) {
          p.release();
          bump(stats.failed, p.label);
        } else {
          p.apply();
          bump(stats.landed, p.label);
        }
      }
    },
    stats,
    get items() {
      return items;
    },
  };
}
