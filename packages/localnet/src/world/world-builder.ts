/**
 * Builds the whole seeded world in memory, deterministically from `options.seed`: real mainnet
 * fixture accounts, the generated collection with its spoofs, fungible mints with many holders,
 * and a funded demo wallet. Pure: nothing is written anywhere (see seed-world.ts for that).
 */
import { buildFungibleTokens } from "./fungible-tokens.ts";
import { buildGeneratedCollection } from "./generated-collection.ts";
import { SYSTEM_PROGRAM, TOKEN_METADATA_PROGRAM } from "./program-ids.ts";
import { loadFixtureAccounts, REAL_COLLECTIONS } from "./real-fixtures.ts";
import { deriveKeypair } from "./seeded-random.ts";
import { decodeMetadata } from "./token-metadata.ts";
import type { WorldOptions } from "./world-options.ts";
import type { ManifestCollection, World, WorldAccount } from "./world-types.ts";

function realCollections(): { accounts: WorldAccount[]; manifest: ManifestCollection[] } {
  const accounts: WorldAccount[] = [];
  const manifest: ManifestCollection[] = [];
  for (const real of REAL_COLLECTIONS) {
    const loaded = loadFixtureAccounts(real.dir);
    const members = loaded
      .filter((a) => a.owner === TOKEN_METADATA_PROGRAM)
      .map((a) => decodeMetadata(a.data))
      .filter((m) => m.collection?.verified && m.collection.key === real.mint)
      .map((m) => m.mint as string)
      .sort();
    accounts.push(...loaded);
    manifest.push({
      name: real.name,
      mint: real.mint,
      seeded: false,
      verifiedMembers: members.length,
      sampleMembers: members,
    });
  }
  return { accounts, manifest };
}

/** Builds the world; the same options always give the same accounts, byte for byte. */
export function buildWorld(options: WorldOptions): World {
  const demoWallet = deriveKeypair(options.seed, "demo-wallet");
  const real = options.realAccounts ? realCollections() : { accounts: [], manifest: [] };
  const generated = buildGeneratedCollection(options, demoWallet.publicKey);
  const fungibles = buildFungibleTokens(
    options.seed,
    options.tokenHolders,
    options.smallMintHolders,
    demoWallet.publicKey,
  );

  const accounts: WorldAccount[] = [
    {
      address: demoWallet.address,
      owner: SYSTEM_PROGRAM,
      lamports: options.demoWalletLamports,
      data: new Uint8Array(0),
      executable: false,
    },
  ];
  for (const part of [real.accounts, generated.accounts, fungibles.accounts]) {
    for (const account of part) accounts.push(account);
  }
  assertUniqueAddresses(accounts);

  return {
    accounts,
    compressedAssets: generated.compressedAssets,
    offchainJson: generated.offchainJson,
    demoWallet,
    manifest: {
      seed: options.seed,
      collections: [generated.collection, generated.lookalike, ...real.manifest],
      spoofs: {
        unverifiedMembers: generated.unverifiedMembers,
        lookalikeCollection: generated.lookalike.mint,
        lookalikeMembers: generated.lookalike.verifiedMembers,
      },
      fungibleMints: fungibles.mints,
      demoWallet: {
        address: demoWallet.address,
        lamports: options.demoWalletLamports.toString(),
        nfts: generated.demoNfts,
        compressedNfts: generated.demoCompressedNfts,
        tokenAccounts: fungibles.demoTokenAccounts,
      },
      counts: { accounts: accounts.length, compressedAssets: generated.compressedAssets.length },
    },
  };
}

/** Two seeded accounts at one address would silently overwrite each other: refuse instead. */
function assertUniqueAddresses(accounts: readonly WorldAccount[]): void {
  const seen = new Set<string>();
  for (const account of accounts) {
    if (seen.has(account.address)) throw new Error(`world seeds ${account.address} twice`);
    seen.add(account.address);
  }
}
