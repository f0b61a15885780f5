/**
 * solana-test-validator builds its genesis from the user's `--account` / `--account-dir` accounts
 * first and then writes its own over them (`create_genesis_config_with_leader_ex`: the mint, the
 * validator's identity, vote and stake accounts, the native mint, then the stake config and the
 * epoch-rewards sysvar, then a feature account per active feature). So a file cannot replace those: the localnet does not write a file at one
 * of these addresses (it still reads and checks it, as agave parses every file). Program accounts
 * (SPL and core BPF) are the other way round in agave (`or_insert`): a file replaces them, as here.
 */
import type { Chain } from "../chain/chain.ts";
import { NATIVE_MINT } from "../accounts/program-ids.ts";
import { GENESIS_FEATURE_IDS } from "../cluster/feature-ids.ts";
import { STAKE_CONFIG } from "../cluster/sysvars.ts";

const EPOCH_REWARDS_SYSVAR = "SysvarEpochRewards1111111111111111111111111";

/** The addresses genesis writes after the user's accounts, as solana-test-validator's genesis does. */
export function genesisOwnedAddresses(chain: Chain): ReadonlySet<string> {
  const { cluster } = chain;
  return new Set([
    chain.faucet,
    cluster.identity.address,
    cluster.voteAccount.address,
    cluster.stakeAccount.address,
    NATIVE_MINT,
    STAKE_CONFIG,
    EPOCH_REWARDS_SYSVAR,
    ...GENESIS_FEATURE_IDS,
  ]);
}
