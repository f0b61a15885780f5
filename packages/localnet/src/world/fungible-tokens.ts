/**
 * Fungible mints with many holders, for program-account paging: one big mint (100,000 holders by
 * default) and a couple of smaller ones, each with a Token Metadata account (standard Fungible).
 * Balances are log-normal, so a few whales hold most of the supply, as on mainnet.
 */
import bs58 from "bs58";
import type { KeyBytes } from "./pda.ts";
import { associatedTokenAddress, metadataAddress, TOKEN_METADATA_PROGRAM, TOKEN_PROGRAM } from "./program-ids.ts";
import { createRandom, deriveKey } from "./seeded-random.ts";
import {
  encodeMint,
  encodeTokenAccount,
  MINT_RENT_LAMPORTS,
  TOKEN_ACCOUNT_RENT_LAMPORTS,
  TokenAccountState,
} from "./spl-token-layout.ts";
import {
  encodeMetadata,
  MAX_NAME_LENGTH,
  MAX_SYMBOL_LENGTH,
  MAX_URI_LENGTH,
  METADATA_KEY,
  padNul,
  TokenStandard,
} from "./token-metadata.ts";
import { METADATA_RENT_LAMPORTS } from "./nft-accounts.ts";
import type { ManifestMint, WorldAccount } from "./world-types.ts";

interface MintPlan {
  symbol: string;
  name: string;
  decimals: number;
  holders: number;
  /** Median balance in whole tokens. */
  median: number;
}

export interface FungibleTokens {
  accounts: WorldAccount[];
  mints: ManifestMint[];
  demoTokenAccounts: string[];
}

/** Whole tokens the demo wallet holds of each mint. */
const DEMO_BALANCE = 1_000n;

/** The mints to create: the big one first, then one per entry of `smallHolders`. */
export function planMints(tokenHolders: number, smallHolders: readonly number[]): MintPlan[] {
  const small: Omit<MintPlan, "holders">[] = [
    { symbol: "BOLT", name: "Bolt", decimals: 9, median: 40 },
    { symbol: "DUST", name: "Stardust", decimals: 0, median: 2_000 },
    { symbol: "OPAL", name: "Opal", decimals: 4, median: 10 },
  ];
  return [
    { symbol: "GATE", name: "Gate Token", decimals: 6, holders: tokenHolders, median: 250 },
    ...smallHolders.map((holders, i) => {
      const base = small[i % small.length];
      return { ...base, symbol: i < small.length ? base.symbol : `${base.symbol}${i}`, holders };
    }),
  ];
}

function tokenAccount(address: KeyBytes, mint: KeyBytes, owner: KeyBytes, amount: bigint): WorldAccount {
  return {
    address: bs58.encode(address),
    owner: TOKEN_PROGRAM,
    lamports: TOKEN_ACCOUNT_RENT_LAMPORTS,
    data: encodeTokenAccount({
      mint,
      owner,
      amount,
      delegate: null,
      state: TokenAccountState.Initialized,
      delegatedAmount: 0n,
      closeAuthority: null,
    }),
    executable: false,
  };
}

/**
 * Builds every fungible mint with its holders' token accounts. Holder wallets and their token
 * accounts are derived addresses nobody holds a key for; the holders' accounts are plain token
 * accounts rather than associated ones because deriving 100k ATAs costs ~7 s of curve checks
 * (both kinds exist on mainnet). The demo wallet gets an associated token account of each mint.
 */
export function buildFungibleTokens(
  seed: string,
  tokenHolders: number,
  smallHolders: readonly number[],
  demoWallet: KeyBytes,
): FungibleTokens {
  const authority = deriveKey(seed, "fungible/authority");
  const accounts: WorldAccount[] = [];
  const mints: ManifestMint[] = [];
  const demoTokenAccounts: string[] = [];
  for (const plan of planMints(tokenHolders, smallHolders)) {
    const random = createRandom(`${seed}/fungible/${plan.symbol}`);
    const mint = deriveKey(seed, `fungible/mint/${plan.symbol}`);
    const unit = 10n ** BigInt(plan.decimals);
    const holderAccounts: WorldAccount[] = [];
    let supply = 0n;
    for (let i = 0; i < plan.holders; i++) {
      const wallet = deriveKey(seed, `fungible/holder/${plan.symbol}`, i);
      // log-normal around the median, in base units, at least one base unit
      const whole = plan.median * Math.exp(1.6 * random.normal());
      const amount = BigInt(Math.max(1, Math.round(whole * Number(unit))));
      supply += amount;
      const address = deriveKey(seed, `fungible/holder-account/${plan.symbol}`, i);
      holderAccounts.push(tokenAccount(address, mint, wallet, amount));
    }
    const demoAccount = associatedTokenAddress(demoWallet, mint);
    supply += DEMO_BALANCE * unit;
    demoTokenAccounts.push(bs58.encode(demoAccount));
    accounts.push(
      {
        address: bs58.encode(mint),
        owner: TOKEN_PROGRAM,
        lamports: MINT_RENT_LAMPORTS,
        data: encodeMint({ mintAuthority: authority, supply, decimals: plan.decimals, freezeAuthority: null }),
        executable: false,
      },
      {
        address: bs58.encode(metadataAddress(mint)),
        owner: TOKEN_METADATA_PROGRAM,
        lamports: METADATA_RENT_LAMPORTS,
        data: encodeMetadata({
          key: METADATA_KEY,
          updateAuthority: bs58.encode(authority) as never,
          mint: bs58.encode(mint) as never,
          name: padNul(plan.name, MAX_NAME_LENGTH),
          symbol: padNul(plan.symbol, MAX_SYMBOL_LENGTH),
          uri: padNul("", MAX_URI_LENGTH),
          sellerFeeBasisPoints: 0,
          creators: null,
          primarySaleHappened: false,
          isMutable: true,
          editionNonce: null,
          tokenStandard: TokenStandard.Fungible,
          collection: null,
          uses: null,
          collectionDetails: null,
          programmableConfig: null,
        }),
        executable: false,
      },
      tokenAccount(demoAccount, mint, demoWallet, DEMO_BALANCE * unit),
    );
    // not push(...holderAccounts): 100k spread arguments overflow the stack
    for (const account of holderAccounts) accounts.push(account);
    mints.push({
      symbol: plan.symbol,
      mint: bs58.encode(mint),
      decimals: plan.decimals,
      holders: plan.holders,
      supply: supply.toString(),
    });
  }
  return { accounts, mints, demoTokenAccounts };
}
