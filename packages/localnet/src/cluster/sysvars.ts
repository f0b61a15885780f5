/**
 * Sysvar accounts as agave 4.4 keeps them, where LiteSVM differs: every sysvar holds its rent-exempt
 * minimum (agave's `adjust_sysvar_balance_for_rent`; LiteSVM writes 1 lamport), the deprecated Fees
 * sysvar does not exist (`disable_fees_sysvar` is active; LiteSVM refuses to drop it, so the
 * account reads hide it: {@link isHiddenAccount}), and the stake config account is the
 * 10-byte config-program layout (short-vec of no keys, warmup_cooldown_rate 0.25, slash_penalty 12)
 * rather than LiteSVM's 17 bytes with a u64 key count, and the Rent sysvar holds agave 4.4's
 * `Rent::default()` ({@link rentData}: 6,960 lamports per byte, threshold bytes 1.0, burn 50%; 3.0's was
 * 3,480 per byte-year x 2.0): the same rent-exempt minimum either way.
 */
import bs58 from "bs58";
import { Account } from "litesvm";
import type { LiteSvm } from "../chain/litesvm-native.ts";

const U64_MAX = 0xffff_ffff_ffff_ffffn;
export const CLOCK_SYSVAR = "SysvarC1ock11111111111111111111111111111111";
export const FEES_SYSVAR = "SysvarFees111111111111111111111111111111111";
export const STAKE_CONFIG = "StakeConfig11111111111111111111111111111111";
export const CONFIG_PROGRAM = "Config1111111111111111111111111111111111111";

/** Sysvars LiteSVM creates that agave 3.0 also has. */
export const SYSVARS = [
  CLOCK_SYSVAR,
  "SysvarEpochSchedu1e111111111111111111111111",
  "SysvarRecentB1ockHashes11111111111111111111",
  "SysvarRent111111111111111111111111111111111",
  "SysvarS1otHashes111111111111111111111111111",
  "SysvarS1otHistory11111111111111111111111111",
  "SysvarStakeHistory1111111111111111111111111",
  "SysvarLastRestartS1ot1111111111111111111111",
  "SysvarEpochRewards1111111111111111111111111",
] as const;

const clockKey = bs58.decode(CLOCK_SYSVAR);
const feesKey = bs58.decode(FEES_SYSVAR);

/** Accounts LiteSVM holds that an agave 3.0 node has not: the Fees sysvar. */
export function isHiddenAccount(key: Uint8Array): boolean {
  if (key[0] !== feesKey[0] || key.length !== 32) return false;
  for (let i = 1; i < 32; i++) if (key[i] !== feesKey[i]) return false;
  return true;
}

function rentExempt(svm: LiteSvm, key: Uint8Array): boolean {
  const account = svm.getAccount(key);
  if (account === null) return false;
  const minimum = svm.minimumBalanceForRentExemption(BigInt(account.data().length));
  if (account.lamports() >= minimum) return false;
  svm.setAccount(key, new Account(minimum, account.data(), account.owner(), account.executable(), U64_MAX));
  return true;
}

/** The stake config account's data: ConfigKeys (short-vec, empty) then Config { 0.25, 12 }. */
export function stakeConfigData(): Uint8Array {
  const data = new Uint8Array(10);
  new DataView(data.buffer).setFloat64(1, 0.25, true);
  data[9] = 12;
  return data;
}

export const RENT_SYSVAR = "SysvarRent111111111111111111111111111111111";

/**
 * agave 4.4's `Rent::default()` (solana-rent 4.4.0, SIMD-0194) in its 17-byte layout: 6960 lamports per
 * byte, the former exemption threshold's bytes as 1.0, burn percent 50. The same minimum balances as
 * 3.0's 3480 per byte-year x 2.0, which LiteSVM still computes with.
 */
export function rentData(): Uint8Array {
  const data = new Uint8Array(17);
  const view = new DataView(data.buffer);
  view.setBigUint64(0, 6960n, true);
  view.setFloat64(8, 1.0, true);
  data[16] = 50;
  return data;
}

/** Applies the genesis differences; returns the addresses written. */
export function writeGenesisSysvars(svm: LiteSvm): string[] {
  const written: string[] = [RENT_SYSVAR];
  const rentKey = bs58.decode(RENT_SYSVAR);
  const rent = svm.getAccount(rentKey)!;
  svm.setAccount(rentKey, new Account(rent.lamports(), rentData(), rent.owner(), false, U64_MAX));
  for (const address of SYSVARS) if (rentExempt(svm, bs58.decode(address))) written.push(address);
  const config = stakeConfigData();
  svm.setAccount(
    bs58.decode(STAKE_CONFIG),
    new Account(
      svm.minimumBalanceForRentExemption(BigInt(config.length)),
      config,
      bs58.decode(CONFIG_PROGRAM),
      false,
      // agave 4.4's add_genesis_stake_config_account leaves it at Account::default()'s, which
      // solana-account 5 (agave 4.4's) makes u64::MAX; it was 0 with solana-account 4 (agave 4.3).
      U64_MAX,
    ),
  );
  written.push(STAKE_CONFIG);
  return written;
}

/** After a block: LiteSVM rewrote the Clock with 1 lamport; restore its balance. */
export function keepSysvarsRentExempt(svm: LiteSvm): string[] {
  return rentExempt(svm, clockKey) ? [CLOCK_SYSVAR] : [];
}
