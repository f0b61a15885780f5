/**
 * The generated NFT collection: a sized collection NFT, its verified members (regular,
 * programmable and compressed), and the spoofs a careless indexer would let in: NFTs that name the
 * collection without being verified, and members verified into a look-alike collection with the
 * same name and symbol under another mint.
 */
import { createHash } from "node:crypto";
import bs58 from "bs58";
import { compressedAssetId } from "./program-ids.ts";
import { nftAccounts, nftMetadata, type NftSpec } from "./nft-accounts.ts";
import { createRandom, deriveKey } from "./seeded-random.ts";
import { TokenStandard } from "./token-metadata.ts";
import type { CompressedAsset, ManifestCollection, OffchainJson, WorldAccount } from "./world-types.ts";
import type { WorldOptions } from "./world-options.ts";
import type { KeyBytes } from "./pda.ts";

export const COLLECTION_NAME = "Solgate Sentinels";
export const COLLECTION_SYMBOL = "SNTL";
const MEMBER_NAME = "Solgate Sentinel";
const URI_BASE = "https://assets.solgate.localnet/sentinels";
/** Leaves per Bubblegum tree (max depth 14). */
const TREE_CAPACITY = 1 << 14;
const TRAITS = ["Obsidian", "Granite", "Quartz", "Basalt", "Marble", "Jade"] as const;

export interface GeneratedCollection {
  accounts: WorldAccount[];
  compressedAssets: CompressedAsset[];
  offchainJson: Map<string, OffchainJson>;
  collection: ManifestCollection;
  lookalike: ManifestCollection;
  unverifiedMembers: string[];
  /** Account-based regular NFTs and compressed NFTs handed to the demo wallet. */
  demoNfts: string[];
  demoCompressedNfts: string[];
}

function hashB58(label: string, id: string): string {
  return bs58.encode(createHash("sha256").update(label).update(id).digest());
}

function memberJson(n: number, image: string, trait: string): OffchainJson {
  return {
    name: `${MEMBER_NAME} #${n}`,
    symbol: COLLECTION_SYMBOL,
    description: "A sentinel of the Solgate localnet.",
    image,
    attributes: [{ trait_type: "Stone", value: trait }],
  };
}

/**
 * Builds the collection. `demoWallet` receives the first three regular members and the first
 * compressed member, so a person can move an NFT straight away.
 */
export function buildGeneratedCollection(options: WorldOptions, demoWallet: KeyBytes): GeneratedCollection {
  const { seed } = options;
  const random = createRandom(`${seed}/collection`);
  const authority = bs58.encode(deriveKey(seed, "collection/update-authority"));
  const royaltyWallet = bs58.encode(deriveKey(seed, "collection/royalties"));
  const collectionMint = deriveKey(seed, "collection/mint");
  const collectionKey = bs58.encode(collectionMint);
  const creators = [
    { address: authority as never, verified: true, share: 0 },
    { address: royaltyWallet as never, verified: false, share: 100 },
  ];
  const accounts: WorldAccount[] = [];
  const compressedAssets: CompressedAsset[] = [];
  const offchainJson = new Map<string, OffchainJson>();
  const demoNfts: string[] = [];
  const demoCompressedNfts: string[] = [];
  const ownerOf = (): KeyBytes => {
    const r = random.next();
    return deriveKey(seed, "nft-owner", Math.floor(options.nftOwners * r * r));
  };

  accounts.push(
    ...nftAccounts({
      mint: collectionMint,
      owner: deriveKey(seed, "collection/update-authority"),
      updateAuthority: authority,
      name: COLLECTION_NAME,
      symbol: COLLECTION_SYMBOL,
      uri: `${URI_BASE}/collection.json`,
      sellerFeeBasisPoints: 0,
      creators,
      tokenStandard: TokenStandard.NonFungible,
      collection: null,
      collectionDetails: { __kind: "V1", size: BigInt(options.collectionSize) },
    }),
  );

  let programmable = 0;
  for (let i = 0; i < options.collectionSize; i++) {
    const n = i + 1;
    const uri = `${URI_BASE}/${n}.json`;
    const trait = random.pick(TRAITS);
    offchainJson.set(uri, memberJson(n, `${URI_BASE}/${n}.png`, trait));
    const compressed = random.next() < options.compressedShare;
    const isProgrammable = !compressed && random.next() < options.programmableShare;
    const spec: NftSpec = {
      mint: deriveKey(seed, "collection/member", i),
      owner: ownerOf(),
      updateAuthority: authority,
      name: `${MEMBER_NAME} #${n}`,
      symbol: COLLECTION_SYMBOL,
      uri,
      sellerFeeBasisPoints: 500,
      creators,
      tokenStandard: isProgrammable ? TokenStandard.ProgrammableNonFungible : TokenStandard.NonFungible,
      collection: { verified: true, key: collectionKey },
    };
    if (compressed) {
      const leafIndex = compressedAssets.length;
      const tree = deriveKey(seed, "collection/merkle-tree", Math.floor(leafIndex / TREE_CAPACITY));
      const treeLeaf = leafIndex % TREE_CAPACITY;
      const id = bs58.encode(compressedAssetId(tree, treeLeaf));
      const owner = demoCompressedNfts.length === 0 ? demoWallet : spec.owner;
      if (owner === demoWallet) demoCompressedNfts.push(id);
      compressedAssets.push({
        id,
        tree: bs58.encode(tree),
        leafIndex: treeLeaf,
        seq: treeLeaf + 1,
        owner: bs58.encode(owner),
        delegate: null,
        metadata: { ...nftMetadata({ ...spec, mint: bs58.decode(id) }, null), primarySaleHappened: false },
        dataHash: hashB58("data", id),
        creatorHash: hashB58("creator", id),
        assetHash: hashB58("leaf", id),
      });
      continue;
    }
    if (isProgrammable) programmable++;
    else if (demoNfts.length < 3) {
      spec.owner = demoWallet;
      demoNfts.push(bs58.encode(spec.mint));
    }
    accounts.push(...nftAccounts(spec));
  }

  // Spoofs: the same names, the collection named but not verified, another update authority.
  const spoofer = bs58.encode(deriveKey(seed, "spoof/update-authority"));
  const unverifiedMembers: string[] = [];
  for (let i = 0; i < options.unverifiedSpoofs; i++) {
    const mint = deriveKey(seed, "spoof/unverified", i);
    unverifiedMembers.push(bs58.encode(mint));
    accounts.push(
      ...nftAccounts({
        mint,
        owner: ownerOf(),
        updateAuthority: spoofer,
        name: `${MEMBER_NAME} #${1 + random.int(Math.max(1, options.collectionSize))}`,
        symbol: COLLECTION_SYMBOL,
        uri: `https://assets.spoof.localnet/sentinels/${i}.json`,
        sellerFeeBasisPoints: 500,
        creators: [{ address: spoofer as never, verified: true, share: 100 }],
        tokenStandard: TokenStandard.NonFungible,
        collection: { verified: false, key: collectionKey },
      }),
    );
  }

  // The look-alike: a real, verified collection of its own that copies name and symbol.
  const lookalikeMint = deriveKey(seed, "spoof/lookalike-collection");
  const lookalikeKey = bs58.encode(lookalikeMint);
  const lookalikeCreators = [{ address: spoofer as never, verified: true, share: 100 }];
  accounts.push(
    ...nftAccounts({
      mint: lookalikeMint,
      owner: deriveKey(seed, "spoof/update-authority"),
      updateAuthority: spoofer,
      name: COLLECTION_NAME,
      symbol: COLLECTION_SYMBOL,
      uri: "https://assets.spoof.localnet/sentinels/collection.json",
      sellerFeeBasisPoints: 0,
      creators: lookalikeCreators,
      tokenStandard: TokenStandard.NonFungible,
      collection: null,
      collectionDetails: { __kind: "V1", size: BigInt(options.lookalikeMembers) },
    }),
  );
  const lookalikeSamples: string[] = [];
  for (let i = 0; i < options.lookalikeMembers; i++) {
    const mint = deriveKey(seed, "spoof/lookalike-member", i);
    if (lookalikeSamples.length < 3) lookalikeSamples.push(bs58.encode(mint));
    accounts.push(
      ...nftAccounts({
        mint,
        owner: ownerOf(),
        updateAuthority: spoofer,
        name: `${MEMBER_NAME} #${1 + random.int(Math.max(1, options.collectionSize))}`,
        symbol: COLLECTION_SYMBOL,
        uri: `https://assets.spoof.localnet/sentinels/l${i}.json`,
        sellerFeeBasisPoints: 500,
        creators: lookalikeCreators,
        tokenStandard: TokenStandard.NonFungible,
        collection: { verified: true, key: lookalikeKey },
      }),
    );
  }

  const trees = [...new Set(compressedAssets.map((a) => a.tree))];
  return {
    accounts,
    compressedAssets,
    offchainJson,
    collection: {
      name: COLLECTION_NAME,
      mint: collectionKey,
      seeded: true,
      verifiedMembers: options.collectionSize,
      programmableMembers: programmable,
      compressedMembers: compressedAssets.length,
      merkleTree: trees.join(",") || undefined,
      updateAuthority: authority,
      sampleMembers: [...demoNfts, ...demoCompressedNfts],
    },
    lookalike: {
      name: COLLECTION_NAME,
      mint: lookalikeKey,
      seeded: true,
      verifiedMembers: options.lookalikeMembers,
      updateAuthority: spoofer,
      sampleMembers: lookalikeSamples,
    },
    unverifiedMembers,
    demoNfts,
    demoCompressedNfts,
  };
}
