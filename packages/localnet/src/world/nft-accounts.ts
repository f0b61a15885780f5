/**
 * The three accounts of a Token Metadata NFT as they sit on mainnet after a mint: the mint
 * (supply 1, decimals 0, authorities handed to the master edition PDA), the metadata PDA, and the
 * holder's associated token account (frozen for programmable NFTs, whose transfers go through
 * Token Metadata).
 */
import bs58 from "bs58";
import type { KeyBytes } from "./pda.ts";
import {
  associatedTokenAddress,
  masterEditionAddress,
  metadataAddress,
  TOKEN_METADATA_PROGRAM,
  TOKEN_PROGRAM,
} from "./program-ids.ts";
import {
  encodeMint,
  encodeTokenAccount,
  MINT_RENT_LAMPORTS,
  TOKEN_ACCOUNT_RENT_LAMPORTS,
  TokenAccountState,
} from "./spl-token-layout.ts";
import {
  encodeMetadata,
  METADATA_KEY,
  MAX_NAME_LENGTH,
  MAX_SYMBOL_LENGTH,
  MAX_URI_LENGTH,
  padNul,
  TokenStandard,
  type CollectionDetails,
  type MetadataCreator,
  type TokenMetadata,
} from "./token-metadata.ts";
import type { WorldAccount } from "./world-types.ts";

/** Rent-exempt minimum of a 679-byte metadata account (what mainnet metadata accounts hold). */
export const METADATA_RENT_LAMPORTS = 5_616_720n;
/** Rule set most programmable NFTs point at (Metaplex's default compatibility rule set). */
export const DEFAULT_RULE_SET = "eBJLFYPxJmMGKuFwpDWkzxZeUrad92kZRC5BJLpzyT9";

/** What distinguishes one NFT from another. */
export interface NftSpec {
  mint: KeyBytes;
  owner: KeyBytes;
  updateAuthority: string;
  name: string;
  symbol: string;
  uri: string;
  sellerFeeBasisPoints: number;
  creators: MetadataCreator[];
  tokenStandard: number;
  collection: { verified: boolean; key: string } | null;
  collectionDetails?: CollectionDetails | null;
}

/** The metadata an NFT spec stands for (strings padded as the program pads them). */
export function nftMetadata(spec: NftSpec, editionNonce: number | null): TokenMetadata {
  const programmable = spec.tokenStandard === TokenStandard.ProgrammableNonFungible;
  return {
    key: METADATA_KEY,
    updateAuthority: spec.updateAuthority as TokenMetadata["updateAuthority"],
    mint: bs58.encode(spec.mint) as TokenMetadata["mint"],
    name: padNul(spec.name, MAX_NAME_LENGTH),
    symbol: padNul(spec.symbol, MAX_SYMBOL_LENGTH),
    uri: padNul(spec.uri, MAX_URI_LENGTH),
    sellerFeeBasisPoints: spec.sellerFeeBasisPoints,
    creators: spec.creators,
    primarySaleHappened: true,
    isMutable: true,
    editionNonce,
    tokenStandard: spec.tokenStandard,
    collection: spec.collection as TokenMetadata["collection"],
    uses: null,
    collectionDetails: spec.collectionDetails ?? null,
    programmableConfig: programmable ? { __kind: "V1", ruleSet: DEFAULT_RULE_SET as never } : null,
  };
}

/** Mint, metadata and token account of one NFT, in that order. */
export function nftAccounts(spec: NftSpec): WorldAccount[] {
  const [edition, editionBump] = masterEditionAddress(spec.mint);
  const tokenAccount = associatedTokenAddress(spec.owner, spec.mint);
  const programmable = spec.tokenStandard === TokenStandard.ProgrammableNonFungible;
  return [
    {
      address: bs58.encode(spec.mint),
      owner: TOKEN_PROGRAM,
      lamports: MINT_RENT_LAMPORTS,
      data: encodeMint({ mintAuthority: edition, supply: 1n, decimals: 0, freezeAuthority: edition }),
      executable: false,
    },
    {
      address: bs58.encode(metadataAddress(spec.mint)),
      owner: TOKEN_METADATA_PROGRAM,
      lamports: METADATA_RENT_LAMPORTS,
      data: encodeMetadata(nftMetadata(spec, editionBump)),
      executable: false,
    },
    {
      address: bs58.encode(tokenAccount),
      owner: TOKEN_PROGRAM,
      lamports: TOKEN_ACCOUNT_RENT_LAMPORTS,
      data: encodeTokenAccount({
        mint: spec.mint,
        owner: spec.owner,
        amount: 1n,
        delegate: null,
        state: programmable ? TokenAccountState.Frozen : TokenAccountState.Initialized,
        delegatedAmount: 0n,
        closeAuthority: null,
      }),
      executable: false,
    },
  ];
}
