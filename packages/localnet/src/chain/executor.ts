/**
 * Runs decoded, sanitized transactions in LiteSVM and gathers what a node records about them:
 * fee, error, logs, compute units, inner instructions, return data, pre/post balances and token
 * balances, loaded data size and cost units.
 *
 * LiteSVM is only ever given canonical bytes produced by `decodeTransaction`. Its own signature
 * verification is used (measured here at ~50 µs per signature, half of node:crypto's cost); it
 * answers bad signatures with `SignatureFailure` rather than aborting, which the fuzz test covers.
 */
import bs58 from "bs58";
import { Account, FailedTransactionMetadata, type TransactionMetadata } from "litesvm";
import type { LiteSvm, NativeSimulatedTransactionInfo as SimulatedTransactionInfo } from "./litesvm-native.ts";
import type { DecodedTransaction } from "../wire/decode-transaction.ts";
import { staticAccountKeys, type AccountKeys } from "../wire/account-keys.ts";
import { transactionFee } from "../wire/fees.ts";
import { transactionErrorToJson, type TransactionErrorJson } from "../wire/transaction-error.ts";
import { isHiddenAccount } from "../cluster/sysvars.ts";
import { isTokenAccount, tokenBalance, type TokenBalanceJson } from "./token-balances.ts";
import {
  advancedNonceData,
  correctAdvancedNonce,
  nextDurableNonceAfter,
  nonceDataForAdvance,
  nonceWriteIndexes,
  type NonceUse,
} from "./durable-nonce.ts";
import { feePayerError } from "./fee-payer.ts";
import type { EmulatedAccount, EmulatedPrograms, EmulationResult } from "../programs/emulated-programs.ts";

/** One inner instruction in compiled form. */
export interface InnerInstruction {
  programIdIndex: number;
  accounts: number[];
  data: Uint8Array;
  stackHeight: number;
}

/** Inner instructions of one top-level instruction. */
export interface InnerInstructionSet {
  index: number;
  instructions: InnerInstruction[];
}

/** An account as read from LiteSVM. */
export interface AccountSnapshot {
  lamports: bigint;
  data: Uint8Array;
  owner: string;
  executable: boolean;
  rentEpoch: bigint;
}

/** Everything a node reports about one executed or simulated transaction. */
export interface ExecutionOutcome {
  /** True when the transaction lands in a block (fee charged), successful or not. */
  committed: boolean;
  err: TransactionErrorJson | null;
  fee: bigint;
  logs: string[];
  computeUnitsConsumed: bigint;
  innerInstructions: InnerInstructionSet[];
  returnData: { programId: string; data: Uint8Array } | null;
  preBalances: bigint[];
  postBalances: bigint[];
  preTokenBalances: TokenBalanceJson[];
  postTokenBalances: TokenBalanceJson[];
  loadedAccountsDataSize: number;
  costUnits: bigint;
  /**
   * A fees-only transaction (agave's `FeesOnlyTransaction`): the fee payer loaded and paid, another
   * account failed to load; nothing ran, so no logs, inner instructions or units (null in `meta`).
   */
  feesOnly?: boolean;
  /** Post-state of the accounts a simulation touched (simulations only). */
  postAccounts?: Map<string, AccountSnapshot>;
}

/** Runs transactions against one LiteSVM instance. */
export interface Executor {
  /**
   * Executes and commits (the state changes when `committed`). `sigVerify` false skips the
   * signature check for bytes already verified (a preflight that passed). `nonce`: the nonce account
   * of a nonce transaction (durable-nonce.ts), advanced even when the transaction fails.
   */
  execute(tx: DecodedTransaction, keys: AccountKeys, sigVerify?: boolean, nonce?: NonceUse | null): ExecutionOutcome;
  /** Simulates without changing state (`nonce` as for `execute`). */
  simulate(tx: DecodedTransaction, keys: AccountKeys, sigVerify: boolean, nonce?: NonceUse | null): ExecutionOutcome;
  /** Simulates and returns only the error (null on success): the cheap path for preflight checks. */
  check(tx: DecodedTransaction, sigVerify: boolean): TransactionErrorJson | null;
  /** Reads one account (null when it does not exist). */
  readAccount(address: string, addressBytes?: Uint8Array): AccountSnapshot | null;
}

const TRANSACTION_ACCOUNT_BASE_SIZE = 64;
const LOADERS = new Set([
  "NativeLoader1111111111111111111111111111111",
  "BPFLoader1111111111111111111111111111111111",
  "BPFLoader2111111111111111111111111111111111",
  "BPFLoaderUpgradeab1e11111111111111111111111",
  "LoaderV411111111111111111111111111111111111",
]);
const SIGNATURE_COST = 720n;
const WRITE_LOCK_COST = 300n;
const LOADED_DATA_COST_PER_32K = 8n;

/** Errors that still charge the fee and land the transaction (the rest are dropped by a leader). */
function isCommittedFailure(err: TransactionErrorJson): boolean {
  return (
    typeof err === "object" &&
    ("InstructionError" in err || "InsufficientFundsForRent" in err || "ProgramExecutionTemporarilyRestricted" in err)
  );
}

/**
 * Load errors agave raises in `load_transaction_accounts`, after the fee payer was validated: the
 * transaction is fees-only (`TransactionLoadResult::FeesOnly`), charged and recorded with the error.
 */
const FEES_ONLY_ERRORS = new Set([
  "ProgramAccountNotFound",
  "InvalidProgramForExecution",
  "MaxLoadedAccountsDataSizeExceeded",
]);

/**
 * Creates an executor over a LiteSVM instance (blockhash check off, history off: the chain owns both).
 * `programs`: the emulated programs (programs/emulated-programs.ts), whose instructions run in two steps.
 */
export function createExecutor(svm: LiteSvm, programs?: EmulatedPrograms): Executor {
  const executables = new Map<string, number>(); // program address -> data length
  const mintDecimals = new Map<string, number>();

  // Owners are few: caching their base58 saves an encode per account read.
  const ownerNames = new Map<string, string>();
  const ownerName = (bytes: Uint8Array): string => {
    const key = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1");
    let name = ownerNames.get(key);
    if (name === undefined) {
      name = bs58.encode(bytes);
      ownerNames.set(key, name);
    }
    return name;
  };

  function readAccount(address: string, addressBytes?: Uint8Array): AccountSnapshot | null {
    const key = addressBytes ?? bs58.decode(address);
    if (isHiddenAccount(key)) return null;
    const account = svm.getAccount(key);
    if (account === null) return null;
    const snapshot: AccountSnapshot = {
      lamports: account.lamports(),
      data: account.data(),
      owner: ownerName(account.owner()),
      executable: account.executable(),
      rentEpoch: account.rentEpoch(),
    };
    if (snapshot.executable) executables.set(address, snapshot.data.length);
    return snapshot;
  }

  /** The snapshot read: 4 addon calls instead of readAccount's 6 (this runs several times per transaction). */
  function peek(address: string, key: Uint8Array): { lamports: bigint; data: Uint8Array; owner: string } | null {
    const account = svm.getAccount(key);
    if (account === null) return null;
    const owner = ownerName(account.owner());
    const data = account.data();
    // Loader-owned accounts (programs, program data) never hold tokens: later reads only need lamports.
    if (LOADERS.has(owner)) executables.set(address, data.length);
    return { lamports: account.lamports(), data, owner };
  }

  function decimalsOf(mint: string): number | null {
    const cached = mintDecimals.get(mint);
    if (cached !== undefined) return cached;
    const account = readAccount(mint);
    if (account === null || account.data.length < 82 || account.data[45] !== 1) return null;
    mintDecimals.set(mint, account.data[44]!);
    return account.data[44]!;
  }

  interface Snapshot {
    lamports: bigint[];
    tokens: TokenBalanceJson[];
    loadedSize: number;
  }

  function snapshot(keys: AccountKeys, previous: Snapshot | null, override?: Map<string, AccountSnapshot>): Snapshot {
    const lamports: bigint[] = [];
    const tokens: TokenBalanceJson[] = [];
    let loadedSize = 0;
    keys.keys.forEach((key, i) => {
      const programSize = executables.get(key);
      if (programSize !== undefined || (previous !== null && !keys.writable[i] && override === undefined)) {
        lamports.push(programSize !== undefined ? (svm.getBalance(keys.keyBytes[i]!) ?? 0n) : previous!.lamports[i]!);
        loadedSize += (programSize ?? 0) + TRANSACTION_ACCOUNT_BASE_SIZE;
        const token = previous?.tokens.find((t) => t.accountIndex === i);
        if (token && programSize === undefined) tokens.push(token);
        return;
      }
      const account = override?.get(key) ?? peek(key, keys.keyBytes[i]!);
      lamports.push(account?.lamports ?? 0n);
      loadedSize += (account?.data.length ?? 0) + TRANSACTION_ACCOUNT_BASE_SIZE;
      if (account && isTokenAccount(account.owner, account.data)) {
        const balance = tokenBalance(i, account.owner, account.data, (b) => bs58.encode(b), decimalsOf);
        if (balance) tokens.push(balance);
      }
    });
    return { lamports, tokens, loadedSize };
  }

  function costUnits(tx: DecodedTransaction, keys: AccountKeys, units: bigint, loadedSize: number): bigint {
    const writable = keys.writable.filter(Boolean).length;
    const dataBytes = tx.message.instructions.reduce((n, ix) => n + ix.data.length, 0);
    return (
      SIGNATURE_COST * BigInt(tx.signatures.length) +
      WRITE_LOCK_COST * BigInt(writable) +
      BigInt(Math.floor(dataBytes / 4)) +
      units +
      LOADED_DATA_COST_PER_32K * BigInt(Math.ceil(loadedSize / 32768))
    );
  }

  function details(meta: TransactionMetadata) {
    const innerInstructions: InnerInstructionSet[] = [];
    meta.innerInstructions().forEach((set, index) => {
      if (set.length === 0) return;
      innerInstructions.push({
        index,
        instructions: set.map((inner) => {
          const ix = inner.instruction();
          return {
            programIdIndex: ix.programIdIndex(),
            accounts: Array.from(ix.accounts()),
            data: ix.data(),
            stackHeight: inner.stackHeight(),
          };
        }),
      });
    });
    const rd = meta.returnData();
    const data = rd.data();
    const returnData = data.length > 0 ? { programId: bs58.encode(rd.programId()), data } : null;
    return { logs: meta.logs(), computeUnitsConsumed: meta.computeUnitsConsumed(), innerInstructions, returnData };
  }

  /**
   * agave's program check of `load_transaction_accounts`, in instruction order: a program id with
   * no account (or no lamports) is `ProgramAccountNotFound`, one owned by no loader
   * `InvalidProgramForExecution` (LiteSVM answers the latter for both).
   */
  function programLoadError(tx: DecodedTransaction, keys: AccountKeys): TransactionErrorJson | null {
    for (const ix of tx.message.instructions) {
      const account = svm.getAccount(keys.keyBytes[ix.programIdIndex]!);
      if (account === null || account.lamports() === 0n) return "ProgramAccountNotFound";
      if (!LOADERS.has(ownerName(account.owner()))) return "InvalidProgramForExecution";
    }
    return null;
  }

  /** The outcome of a fees-only transaction; when committing, the fee payer is debited if LiteSVM did not. */
  function feesOnly(
    tx: DecodedTransaction,
    keys: AccountKeys,
    err: TransactionErrorJson,
    pre: Snapshot,
    fee: bigint,
    commit: boolean,
    nonce: NonceUse | null,
  ): ExecutionOutcome {
    const payerKey = keys.keyBytes[0]!;
    // agave 3.0 counts a fees-only transaction's rollback accounts (the fee payer, and a nonce account
    // apart from it): their data length.
    const payerDataSize = svm.getAccount(payerKey)?.data().length ?? 0;
    const nonceDataSize = nonce !== null && nonce.index !== 0 ? (svm.getAccount(nonce.key)?.data().length ?? 0) : 0;
    if (commit) {
      const payer = svm.getAccount(payerKey);
      if (payer !== null && payer.lamports() === pre.lamports[0]) {
        svm.setAccount(
          payerKey,
          new Account(payer.lamports() - fee, payer.data(), payer.owner(), payer.executable(), payer.rentEpoch()),
        );
      }
      if (nonce !== null) advanceNonce(nonce);
    }
    const postBalances = [...pre.lamports];
    postBalances[0] = postBalances[0]! - fee;
    return {
      committed: true,
      feesOnly: true,
      err,
      fee,
      logs: [],
      computeUnitsConsumed: 0n,
      innerInstructions: [],
      returnData: null,
      preBalances: pre.lamports,
      postBalances,
      preTokenBalances: pre.tokens,
      postTokenBalances: pre.tokens,
      loadedAccountsDataSize: payerDataSize + nonceDataSize,
      costUnits: costUnits(tx, keys, 0n, pre.loadedSize),
    };
  }

  /** The value an advance stores now: LiteSVM's latest blockhash is the bank's last (a produced block's parent's). */
  const nextDurableNonce = () => nextDurableNonceAfter(svm.latestBlockhash());

  /** agave's rollback nonce account: as loaded (less the fee when it paid it), its nonce advanced. */
  function advanceNonce(nonce: NonceUse): void {
    const account = svm.getAccount(nonce.key);
    if (account === null) return;
    const data = advancedNonceData(account.data(), nextDurableNonce());
    svm.setAccount(
      nonce.key,
      new Account(account.lamports(), data, account.owner(), account.executable(), account.rentEpoch()),
    );
  }

  /** Replaces LiteSVM's nonce value in the accounts a successful transaction advanced or initialized. */
  function correctNonces(tx: DecodedTransaction, keys: AccountKeys, postAccounts?: Map<string, AccountSnapshot>): void {
    for (const index of nonceWriteIndexes(tx.message)) {
      if (postAccounts !== undefined) {
        const post = postAccounts.get(keys.keys[index]!);
        const data = post && correctAdvancedNonce(tx.message, post.owner, post.data, nextDurableNonce());
        if (post && data) post.data = data;
        continue;
      }
      const key = keys.keyBytes[index]!;
      const account = svm.getAccount(key);
      if (account === null) continue;
      const data = correctAdvancedNonce(tx.message, ownerName(account.owner()), account.data(), nextDurableNonce());
      if (data !== null) {
        svm.setAccount(
          key,
          new Account(account.lamports(), data, account.owner(), account.executable(), account.rentEpoch()),
        );
      }
    }
  }

  /**
   * Makes LiteSVM's AdvanceNonceAccount check agree with agave's (durable-nonce.ts `nonceDataForAdvance`)
   * for the run; returns what puts the accounts back: after a simulation, the originals; after an
   * execution, the original data wherever the stand-in is still held (the instruction did not advance).
   */
  function standInNonces(tx: DecodedTransaction, keys: AccountKeys): (simulated: boolean) => void {
    const stood: { key: Uint8Array; original: Account; stand: Uint8Array }[] = [];
    for (const index of nonceWriteIndexes(tx.message, true)) {
      const key = keys.keyBytes[index];
      const original = key && svm.getAccount(key);
      if (!key || !original || stood.some((s) => s.key === key)) continue;
      const stand = nonceDataForAdvance(tx.message, ownerName(original.owner()), original.data(), nextDurableNonce());
      if (stand === null) continue;
      svm.setAccount(
        key,
        new Account(original.lamports(), stand, original.owner(), original.executable(), original.rentEpoch()),
      );
      stood.push({ key, original, stand });
    }
    return (simulated) => {
      for (const { key, original, stand } of stood) {
        const now = svm.getAccount(key);
        if (simulated || now === null) svm.setAccount(key, original);
        else if (Buffer.compare(now.data(), stand) === 0) {
          svm.setAccount(
            key,
            new Account(now.lamports(), original.data(), now.owner(), now.executable(), now.rentEpoch()),
          );
        }
      }
    };
  }

  /** Did the fee payer fail agave's validation (then nothing was processed, whatever LiteSVM's error says)? */
  function payerRefused(keys: AccountKeys, fee: bigint): boolean {
    const payer = peek(keys.keys[0]!, keys.keyBytes[0]!);
    return feePayerError(payer, fee, (size) => svm.minimumBalanceForRentExemption(BigInt(size))) !== null;
  }

  function run(
    tx: DecodedTransaction,
    keys: AccountKeys,
    simulate: boolean,
    sigVerify: boolean,
    nonce: NonceUse | null,
  ): ExecutionOutcome {
    if (programs?.appliesTo(tx, keys)) return runEmulated(tx, keys, simulate, sigVerify, nonce);
    return runNative(tx, keys, simulate, sigVerify, nonce);
  }

  /**
   * A transaction calling an emulated program: simulated by LiteSVM (the stand-in succeeds), the
   * emulated instructions run on the simulated state, then committed whole or failed whole.
   */
  function runEmulated(
    tx: DecodedTransaction,
    keys: AccountKeys,
    simulate: boolean,
    sigVerify: boolean,
    nonce: NonceUse | null,
  ): ExecutionOutcome {
    const simulated = runNative(tx, keys, true, sigVerify, nonce);
    if (simulated.err !== null || !simulated.committed || simulated.postAccounts === undefined) {
      return simulate ? simulated : runNative(tx, keys, false, sigVerify, nonce);
    }
    const post = simulated.postAccounts;
    const readState = (key: string): EmulatedAccount | null => {
      const account = post.get(key) ?? readAccount(key);
      return account === null || account.lamports === 0n ? null : { ...account };
    };
    const result = programs!.run(tx, keys, readState, svm.getClock().slot, (size) =>
      svm.minimumBalanceForRentExemption(BigInt(size)),
    );
    if (!result.ok) return emulatedFailure(tx, keys, simulated, result, simulate, nonce);
    if (simulate) {
      const postAccounts = new Map(post);
      for (const [key, account] of result.writes) postAccounts.set(key, account ?? closedAccount());
      const after = snapshot(keys, null, postAccounts);
      return {
        ...simulated,
        ...splice(simulated, result),
        postBalances: after.lamports,
        postTokenBalances: after.tokens,
        postAccounts,
      };
    }
    const committed = runNative(tx, keys, false, false, nonce);
    if (committed.err !== null) return committed; // the state moved between the two runs: what LiteSVM says stands
    for (const [key, account] of result.writes) {
      const written = account ?? closedAccount();
      svm.setAccount(
        bs58.decode(key),
        new Account(written.lamports, written.data, bs58.decode(written.owner), written.executable, written.rentEpoch),
      );
    }
    programs!.committed(result);
    const after = snapshot(keys, null);
    return {
      ...committed,
      ...splice(committed, result),
      postBalances: after.lamports,
      postTokenBalances: after.tokens,
    };
  }

  /**
   * The emulated logs and inner instructions put into LiteSVM's. With `upTo` (a failed instruction), the
   * logs stop after that instruction's own lines: the stand-in's `consumed` line, then its failure.
   */
  function splice(
    outcome: ExecutionOutcome,
    result: Pick<EmulationResult, "logs" | "inner">,
    upTo?: { index: number; program: string; code: number },
  ): Pick<ExecutionOutcome, "logs" | "innerInstructions"> {
    const logs: string[] = [];
    let top = -1;
    for (const line of outcome.logs) {
      const invoke = /^Program \S+ invoke \[1\]$/u.test(line);
      if (invoke) top++;
      if (upTo !== undefined && top === upTo.index && !invoke) {
        if (line.startsWith(`Program ${upTo.program} consumed`)) logs.push(line);
        logs.push(`Program ${upTo.program} failed: custom program error: 0x${upTo.code.toString(16)}`);
        break;
      }
      logs.push(line);
      if (invoke) logs.push(...(result.logs.get(top) ?? []));
    }
    const sets = new Map(outcome.innerInstructions.map((set) => [set.index, [...set.instructions]]));
    for (const [index, list] of result.inner) {
      if (list.length === 0) continue;
      sets.set(index, [...(sets.get(index) ?? []), ...list]);
    }
    const innerInstructions = [...sets.entries()]
      .filter(([index]) => upTo === undefined || index <= upTo.index)
      .sort(([a], [b]) => a - b)
      .map(([index, instructions]) => ({ index, instructions }));
    return { logs, innerInstructions };
  }

  /** An emulated instruction failed: the transaction lands failed, its fee charged, nothing else written. */
  function emulatedFailure(
    tx: DecodedTransaction,
    keys: AccountKeys,
    simulated: ExecutionOutcome,
    result: Extract<EmulationResult, { ok: false }>,
    simulate: boolean,
    nonce: NonceUse | null,
  ): ExecutionOutcome {
    const fee = simulated.fee;
    if (!simulate) {
      const payerKey = keys.keyBytes[0]!;
      const payer = svm.getAccount(payerKey);
      if (payer !== null)
        svm.setAccount(
          payerKey,
          new Account(payer.lamports() - fee, payer.data(), payer.owner(), payer.executable(), payer.rentEpoch()),
        );
      if (nonce !== null) advanceNonce(nonce);
    }
    const program = keys.keys[tx.message.instructions[result.index]!.programIdIndex]!;
    const { logs, innerInstructions } = splice(simulated, result, { index: result.index, program, code: result.code });
    const postBalances = [...simulated.preBalances];
    postBalances[0] = postBalances[0]! - fee;
    return {
      ...simulated,
      committed: true,
      err: { InstructionError: [result.index, { Custom: result.code }] },
      logs,
      innerInstructions,
      returnData: null,
      postBalances,
      postTokenBalances: simulated.preTokenBalances,
      postAccounts: undefined,
    };
  }

  function closedAccount(): AccountSnapshot {
    return {
      lamports: 0n,
      data: new Uint8Array(0),
      owner: "11111111111111111111111111111111",
      executable: false,
      rentEpoch: 0n,
    };
  }

  function runNative(
    tx: DecodedTransaction,
    keys: AccountKeys,
    simulate: boolean,
    sigVerify: boolean,
    nonce: NonceUse | null,
  ): ExecutionOutcome {
    const pre = snapshot(keys, null);
    const fee = transactionFee(tx.message);
    const putBack = standInNonces(tx, keys);
    svm.setSigverify(sigVerify);
    let result;
    try {
      if (simulate) {
        result =
          tx.message.version === "legacy"
            ? svm.simulateLegacyTransaction(tx.wire)
            : svm.simulateVersionedTransaction(tx.wire);
      } else {
        result =
          tx.message.version === "legacy" ? svm.sendLegacyTransaction(tx.wire) : svm.sendVersionedTransaction(tx.wire);
      }
    } finally {
      if (!sigVerify) svm.setSigverify(true);
      putBack(simulate);
    }
    const failed = result instanceof FailedTransactionMetadata;
    const err = failed ? transactionErrorToJson((result as FailedTransactionMetadata).err()) : null;
    // A load failure after the fee payer paid (LiteSVM checks the payer first): fees-only.
    if (typeof err === "string" && FEES_ONLY_ERRORS.has(err) && pre.lamports[0]! >= fee) {
      const loadErr = err === "MaxLoadedAccountsDataSizeExceeded" ? err : (programLoadError(tx, keys) ?? err);
      return feesOnly(tx, keys, loadErr, pre, fee, !simulate, nonce);
    }
    const meta = failed
      ? (result as FailedTransactionMetadata).meta()
      : simulate
        ? (result as SimulatedTransactionInfo).meta()
        : (result as TransactionMetadata);
    const info = details(meta);
    let committed: boolean;
    let post: Snapshot;
    let postAccounts: Map<string, AccountSnapshot> | undefined;
    if (simulate) {
      // LiteSVM's InsufficientFundsForRent may be the fee payer's, before anything ran: not processed.
      committed =
        err === null ||
        (isCommittedFailure(err) &&
          !(typeof err === "object" && "InsufficientFundsForRent" in err && payerRefused(keys, fee)));
      if (!failed) {
        postAccounts = new Map();
        for (const entry of (result as SimulatedTransactionInfo).postAccounts()) {
          const a = entry.account();
          postAccounts.set(bs58.encode(entry.address), {
            lamports: a.lamports(),
            data: a.data(),
            owner: ownerName(a.owner()),
            executable: a.executable(),
            rentEpoch: a.rentEpoch(),
          });
        }
        correctNonces(tx, keys, postAccounts);
        post = snapshot(keys, pre, postAccounts);
      } else {
        post = { ...pre, lamports: [...pre.lamports] };
        if (committed) post.lamports[0] = post.lamports[0]! - fee;
      }
    } else {
      const payerAfter = svm.getBalance(keys.keyBytes[0]!) ?? 0n;
      committed = err === null || payerAfter !== pre.lamports[0];
      if (err === null) correctNonces(tx, keys);
      else if (committed && nonce !== null) advanceNonce(nonce);
      post = committed ? snapshot(keys, pre) : pre;
    }
    return {
      committed,
      err,
      fee,
      ...info,
      preBalances: pre.lamports,
      postBalances: post.lamports,
      preTokenBalances: pre.tokens,
      postTokenBalances: post.tokens,
      loadedAccountsDataSize: pre.loadedSize,
      costUnits: costUnits(tx, keys, info.computeUnitsConsumed, pre.loadedSize),
      postAccounts,
    };
  }

  function check(tx: DecodedTransaction, sigVerify: boolean): TransactionErrorJson | null {
    if (programs !== undefined) {
      const keys = staticAccountKeys(tx.message);
      if (tx.message.lookups.length === 0 && programs.appliesTo(tx, keys))
        return runEmulated(tx, keys, true, sigVerify, null).err;
    }
    const putBack = standInNonces(tx, staticAccountKeys(tx.message));
    svm.setSigverify(sigVerify);
    try {
      const result =
        tx.message.version === "legacy"
          ? svm.simulateLegacyTransaction(tx.wire)
          : svm.simulateVersionedTransaction(tx.wire);
      return result instanceof FailedTransactionMetadata ? transactionErrorToJson(result.err()) : null;
    } finally {
      if (!sigVerify) svm.setSigverify(true);
      putBack(true);
    }
  }

  return {
    execute: (tx, keys, sigVerify = true, nonce = null) => run(tx, keys, false, sigVerify, nonce),
    check,
    simulate: (tx, keys, sigVerify, nonce = null) => run(tx, keys, true, sigVerify, nonce),
    readAccount,
  };
}
