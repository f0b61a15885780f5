/**
 * The one place that touches LiteSVM's account storage. It uses the native binding under the
 * `LiteSVM` wrapper (`svm.inner`): the wrapper re-encodes every address through a kit codec and
 * costs ~60 µs a read against ~9 µs here (measured on 100,000 accounts), and its `setAccount`
 * cannot write a rent epoch. Every write is validated first: bad input must never reach the addon,
 * whose panics abort the whole process.
 */
import { Account as SvmAccount, type LiteSVM } from "litesvm";
import { isHiddenAccount } from "../cluster/sysvars.ts";
import { nativeSvm } from "../chain/litesvm-native.ts";

/** An account as stored: what the RPC encoders need, nothing more. */
export interface AccountSnapshot {
  readonly lamports: bigint;
  /** The owner program's 32 bytes. */
  readonly owner: Uint8Array;
  readonly executable: boolean;
  readonly rentEpoch: bigint;
  readonly data: Uint8Array;
}

/** The native binding's account surface (see `litesvm/dist/internal.d.ts`). */
interface NativeSvm {
  getAccount(pubkey: Uint8Array): SvmAccount | null;
  setAccount(pubkey: Uint8Array, account: SvmAccount): void;
  getProgramAccounts(programId: Uint8Array): Array<{ address: Uint8Array; account(): SvmAccount }>;
  minimumBalanceForRentExemption(dataLen: bigint): bigint;
}

/** Synchronous account reads and writes against one LiteSVM instance. */
export interface SvmStore {
  /** The account at a 32-byte key, or null when LiteSVM has none (zero-lamport accounts are gone). */
  read(key: Uint8Array): AccountSnapshot | null;
  /** Writes an account; throws (without touching LiteSVM) when the snapshot is malformed. */
  write(key: Uint8Array, account: AccountSnapshot): void;
  /** Every account LiteSVM holds for an owner program (a full native scan). */
  programAccounts(owner: Uint8Array): Array<{ key: Uint8Array; account: AccountSnapshot }>;
  /** Rent-exempt minimum for a data length; computed without LiteSVM beyond 10 MiB (overflow-safe). */
  minimumBalance(dataLen: bigint): bigint;
  /** The Clock sysvar's unix timestamp. */
  unixTimestamp(): bigint;
  /** Whether this store reads the given LiteSVM instance. */
  isBackedBy(svm: LiteSVM): boolean;
}

/** Largest account data the runtime allows (agave's `MAX_PERMITTED_DATA_LENGTH`). */
export const MAX_ACCOUNT_DATA_LENGTH = 10 * 1024 * 1024;
const U64_MAX = 0xffff_ffff_ffff_ffffn;
/** Account storage overhead that rent charges on top of the data (agave's `ACCOUNT_STORAGE_OVERHEAD`). */
const ACCOUNT_STORAGE_OVERHEAD = 128n;

function snapshotOf(account: SvmAccount): AccountSnapshot {
  return {
    lamports: account.lamports(),
    owner: account.owner(),
    executable: account.executable(),
    rentEpoch: account.rentEpoch(),
    data: account.data(),
  };
}

function nativeOf(svm: LiteSVM): NativeSvm {
  return nativeSvm(svm) as unknown as NativeSvm;
}

/** Throws unless a snapshot is safe to hand to LiteSVM. */
export function assertWritable(key: Uint8Array, account: AccountSnapshot): void {
  if (!(key instanceof Uint8Array) || key.length !== 32) throw new TypeError("account address must be 32 bytes");
  if (!(account.owner instanceof Uint8Array) || account.owner.length !== 32) {
    throw new TypeError("account owner must be 32 bytes");
  }
  if (typeof account.lamports !== "bigint" || account.lamports < 0n || account.lamports > U64_MAX) {
    throw new RangeError("lamports must be a u64 bigint");
  }
  if (typeof account.rentEpoch !== "bigint" || account.rentEpoch < 0n || account.rentEpoch > U64_MAX) {
    throw new RangeError("rentEpoch must be a u64 bigint");
  }
  if (!(account.data instanceof Uint8Array) || account.data.length > MAX_ACCOUNT_DATA_LENGTH) {
    throw new RangeError(`account data must be a Uint8Array of at most ${MAX_ACCOUNT_DATA_LENGTH} bytes`);
  }
  // Executable accounts make LiteSVM load them as programs; that path is the chain's (addProgram).
  if (account.executable !== false) throw new TypeError("seeding executable accounts is not supported");
}

/** Wraps a LiteSVM instance; see {@link SvmStore}. */
export function createSvmStore(svm: LiteSVM): SvmStore {
  const native = nativeOf(svm);
  let perByte: bigint | undefined;
  return {
    read(key) {
      if (isHiddenAccount(key)) return null;
      const account = native.getAccount(key);
      return account === null ? null : snapshotOf(account);
    },
    write(key, account) {
      assertWritable(key, account);
      const value = new SvmAccount(account.lamports, account.data, account.owner, false, account.rentEpoch);
      native.setAccount(key, value);
    },
    programAccounts(owner) {
      return native
        .getProgramAccounts(owner)
        .filter((entry) => !isHiddenAccount(entry.address))
        .map((entry) => ({
          key: entry.address,
          account: snapshotOf(entry.account()),
        }));
    },
    minimumBalance(dataLen) {
      if (dataLen <= BigInt(MAX_ACCOUNT_DATA_LENGTH)) return native.minimumBalanceForRentExemption(dataLen);
      // Linear in (overhead + len); extrapolate from the 0-byte minimum instead of asking the addon
      // to multiply a client-chosen length (agave saturates; so do we).
      perByte ??= native.minimumBalanceForRentExemption(0n) / ACCOUNT_STORAGE_OVERHEAD;
      const value = (ACCOUNT_STORAGE_OVERHEAD + dataLen) * perByte;
      return value > U64_MAX ? U64_MAX : value;
    },
    unixTimestamp() {
      return svm.getClock().unixTimestamp;
    },
    isBackedBy(other) {
      return other === svm;
    },
  };
}
