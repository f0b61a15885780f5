/**
 * What the world builder produces: accounts to write to the chain, compressed assets that exist
 * only in the DAS index, and a manifest of the addresses a person or a test needs.
 */
import type { SeededKeypair } from "./seeded-random.ts";
import type { TokenMetadata } from "./token-metadata.ts";

/** One account to write to the chain, as `setAccount` takes it. */
export interface WorldAccount {
  address: string;
  owner: string;
  lamports: bigint;
  data: Uint8Array;
  executable: boolean;
}

/**
 * A compressed NFT: a leaf of a Bubblegum tree, with no account of its own. Its id is the
 * Bubblegum asset PDA of (tree, leaf index), as on mainnet.
 */
export interface CompressedAsset {
  id: string;
  tree: string;
  leafIndex: number;
  seq: number;
  owner: string;
  delegate: string | null;
  /** The leaf's metadata, in the Token Metadata shape (mint = the asset id). */
  metadata: TokenMetadata;
  /** The leaf's hashes (base58): stand-ins for the world's assets, Bubblegum's keccak hashes for those minted on chain. */
  dataHash: string;
  creatorHash: string;
  assetHash: string;
  /** Burnt on chain (a Bubblegum burn): listed nowhere. */
  burnt?: boolean;
}

/** The off-chain JSON a DAS indexer would fetch from `uri`, for assets the world generated. */
export interface OffchainJson {
  name: string;
  symbol: string;
  description: string;
  image: string;
  attributes: { trait_type: string; value: string }[];
}

/** Addresses of what was seeded, printed at start and written to the manifest file. */
export interface WorldManifest {
  seed: string;
  collections: ManifestCollection[];
  spoofs: { unverifiedMembers: string[]; lookalikeCollection: string; lookalikeMembers: number };
  fungibleMints: ManifestMint[];
  demoWallet: {
    address: string;
    lamports: string;
    nfts: string[];
    compressedNfts: string[];
    tokenAccounts: string[];
    keypairFile?: string;
  };
  counts: { accounts: number; compressedAssets: number };
  /** The background traffic, when it runs (LOCALNET_TRAFFIC): its profile and the accounts it contends for. */
  traffic?: ManifestTraffic;
}

/** The traffic's accounts, as the banner names them. */
export interface ManifestTraffic {
  profile: string;
  ratePerSlot: number;
  /** Write-locked accounts whose demand is above (congestion profiles) their per-account limit. */
  hotAccounts: string[];
  /** The wallets that sign the traffic. */
  wallets: string[];
}

export interface ManifestCollection {
  name: string;
  /** The collection NFT's mint: the `groupValue` for getAssetsByGroup. */
  mint: string;
  /** Where the collection NFT's mint/metadata accounts exist on this chain (false for real mainnet collections whose NFT is not seeded). */
  seeded: boolean;
  verifiedMembers: number;
  programmableMembers?: number;
  compressedMembers?: number;
  merkleTree?: string;
  updateAuthority?: string;
  sampleMembers: string[];
}

export interface ManifestMint {
  symbol: string;
  mint: string;
  decimals: number;
  holders: number;
  supply: string;
}

/** A whole world, ready to seed. */
export interface World {
  accounts: WorldAccount[];
  compressedAssets: CompressedAsset[];
  offchainJson: Map<string, OffchainJson>;
  demoWallet: SeededKeypair;
  manifest: WorldManifest;
}
