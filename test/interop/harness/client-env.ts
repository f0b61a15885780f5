/**
 * The environment every interop client reads (test/interop/go/fixture.go documents each variable):
 * where the gateway is, the key, which services have landed, and what the chain fixture holds.
 */
import type { ChainFixture } from "./chain-fixture.ts";
import { LANDED_SERVICES } from "./landed.ts";

export const TOKEN_PROGRAM = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";

/** Collection expectations. */
export interface CollectionFixture {
  address: string;
  name: string;
  itemCount: string;
  /** Verified member ids, sorted as the service sorts them. */
  members: string[];
  /** A wallet holding NFTs (the world's demo wallet), and their ids, sorted as DAS sorts them. */
  nftOwner: string;
  nftOwnerIds: string[];
}

/** The environment, less the per-client draft (INTEROP_DRAFT_TX). */
export function clientEnv(
  target: { addr: string; apiKey: string; localnetUrl: string },
  chain: ChainFixture,
  collection: CollectionFixture,
): Record<string, string> {
  return {
    SOLGATE_ADDR: target.addr,
    SOLGATE_API_KEY: target.apiKey,
    INTEROP_LOCALNET_URL: target.localnetUrl,
    INTEROP_LANDED: LANDED_SERVICES.join(","),
    INTEROP_PROGRAM_ID: TOKEN_PROGRAM,
    INTEROP_PROGRAM_SIZE: "165",
    INTEROP_PROGRAM_MATCH: `0:${chain.mint}`,
    INTEROP_PROGRAM_EXPECT: chain.tokenAccounts
      .map((a) => [a.address, a.lamports, a.space, a.mint, a.owner, a.raw, a.decimals, a.state].join(","))
      .join(";"),
    INTEROP_PAYER_SEED: chain.payerSeed,
    INTEROP_COLLECTION: collection.address,
    INTEROP_COLLECTION_EXPECT: `${collection.itemCount};${collection.name};${collection.members.join(",")}`,
    INTEROP_NFT_OWNER: collection.nftOwner,
    INTEROP_NFT_OWNER_EXPECT: collection.nftOwnerIds.join(","),
  };
}
