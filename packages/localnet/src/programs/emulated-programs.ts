/**
 * Programs the localnet emulates: Token Metadata and Bubblegum (with the Account Compression and SPL
 * Noop programs Bubblegum calls). No registry package ships their binaries and no SBF toolchain can be
 * had here, so each address holds the stand-in program (stand-in-program.ts) and this module does
 * what the real program would: it checks the instruction (its real encoding and accounts), writes the
 * accounts it would write (the real layouts), logs what it would log and records its cross-program
 * calls as inner instructions (Bubblegum's leaf events through Noop, its calls into Account
 * Compression and Token Metadata, Token Metadata's into System and SPL Token).
 *
 * The executor runs a transaction that calls one of them in two steps: LiteSVM simulates it (the
 * stand-in succeeds, every other instruction really runs), the emulated instructions run in order on
 * the simulated state, and only then is the transaction committed (LiteSVM, then the emulated writes)
 * or, when an emulated instruction fails, recorded as failed with its fee charged. So an emulated
 * instruction sees the state after all the transaction's other instructions, and its writes land after
 * them: a transaction whose later instructions read what an emulated one wrote is not reproduced.
 */
import type { DecodedTransaction } from "../wire/decode-transaction.ts";
import type { AccountKeys } from "../wire/account-keys.ts";

/** An account as the emulation reads and writes it. */
export interface EmulatedAccount {
  lamports: bigint;
  data: Uint8Array;
  owner: string;
  executable: boolean;
  rentEpoch: bigint;
}

/** An instruction's account: where it is in the transaction and how it is passed. */
export interface AccountRef {
  readonly key: string;
  readonly bytes: Uint8Array;
  /** Index in the transaction's account keys. */
  readonly index: number;
  readonly signer: boolean;
  readonly writable: boolean;
}

/** A failed instruction: `Custom(code)` in the transaction's error, `message` in its logs. */
export class ProgramError extends Error {
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.code = code;
  }
}

/** What an emulated instruction can do. */
export interface InvokeContext {
  readonly programId: string;
  readonly accounts: readonly AccountRef[];
  readonly data: Uint8Array;
  /** The slot the transaction runs in. */
  readonly slot: bigint;
  /** The current state (the simulated post-state, then this transaction's emulated writes). */
  read(key: string): EmulatedAccount | null;
  /** Writes an account (null closes it); the account must be writable in the transaction. */
  write(ref: AccountRef, account: EmulatedAccount | null): void;
  /** `Program log: <message>`. */
  log(message: string): void;
  /**
   * A cross-program call: recorded as an inner instruction (its logs nested), `effect` doing what the
   * callee does (or the callee's emulation when it has one and no effect is given).
   */
  invoke(program: AccountRef, accounts: readonly AccountRef[], data: Uint8Array, effect?: () => void): void;
  rentExempt(size: number): bigint;
  /** Tells the listeners (the DAS index) something once the transaction is committed. */
  emit(event: ProgramEvent): void;
  /** Runs `apply` once the transaction is committed (state the program keeps beside its accounts). */
  onCommit(apply: () => void): void;
  /** State shared by every instruction of this transaction's run (copies made before committing). */
  readonly scratch: Map<string, unknown>;
}

/** What an emulated program reports to an indexer once its transaction is committed. */
export type ProgramEvent = { kind: "compressed-leaf"; leaf: import("./bubblegum-program.ts").CompressedLeaf };

export type ProgramHandler = (ctx: InvokeContext) => void;

/** One inner instruction as the executor records it. */
export interface EmulatedInnerInstruction {
  programIdIndex: number;
  accounts: number[];
  data: Uint8Array;
  stackHeight: number;
}

/** The emulated part of one transaction's run. */
export type EmulationResult =
  | {
      ok: true;
      writes: Map<string, EmulatedAccount | null>;
      /** Per top-level instruction index: log lines to put after its `invoke [1]`, and its inner instructions. */
      logs: Map<number, string[]>;
      inner: Map<number, EmulatedInnerInstruction[]>;
      events: ProgramEvent[];
      commits: (() => void)[];
    }
  | {
      ok: false;
      index: number;
      code: number;
      logs: Map<number, string[]>;
      inner: Map<number, EmulatedInnerInstruction[]>;
    };

/** Programs with no account effects of their own when called (their calls are still recorded). */
const BUILTIN_CALLEES = new Set(["11111111111111111111111111111111"]);
const CPI_UNITS = 1_000;

export interface EmulatedPrograms {
  /** Program ids that hold the stand-in. */
  readonly ids: readonly string[];
  /** Whether a top-level instruction of `tx` calls an emulated program that does something. */
  appliesTo(tx: DecodedTransaction, keys: AccountKeys): boolean;
  run(
    tx: DecodedTransaction,
    keys: AccountKeys,
    read: (key: string) => EmulatedAccount | null,
    slot: bigint,
    rentExempt: (size: number) => bigint,
  ): EmulationResult;
  /** Hears every committed transaction's events. */
  onEvent(listener: (event: ProgramEvent) => void): () => void;
  /** Called by the executor once the transaction's writes are committed. */
  committed(result: { events: readonly ProgramEvent[]; commits: readonly (() => void)[] }): void;
}

/** Builds the registry from handlers by program id (programs with no handler, like Noop, just succeed). */
export function createEmulatedPrograms(
  handlers: ReadonlyMap<string, ProgramHandler>,
  standIns: readonly string[],
): EmulatedPrograms {
  const listeners = new Set<(event: ProgramEvent) => void>();
  return {
    ids: standIns,
    appliesTo(tx, keys) {
      return tx.message.instructions.some((ix) => handlers.has(keys.keys[ix.programIdIndex]!));
    },
    run(tx, keys, readBase, slot, rentExempt) {
      const writes = new Map<string, EmulatedAccount | null>();
      const logs = new Map<number, string[]>();
      const inner = new Map<number, EmulatedInnerInstruction[]>();
      const events: ProgramEvent[] = [];
      const commits: (() => void)[] = [];
      const scratch = new Map<string, unknown>();
      const read = (key: string) => (writes.has(key) ? writes.get(key)! : readBase(key));
      const refOf = (index: number): AccountRef => ({
        key: keys.keys[index]!,
        bytes: keys.keyBytes[index]!,
        index,
        signer: keys.signer[index] === true,
        writable: keys.writable[index] === true,
      });
      for (let i = 0; i < tx.message.instructions.length; i++) {
        const ix = tx.message.instructions[i]!;
        const programId = keys.keys[ix.programIdIndex]!;
        const handler = handlers.get(programId);
        if (handler === undefined) continue;
        const lines: string[] = [];
        const innerList: EmulatedInnerInstruction[] = [];
        logs.set(i, lines);
        inner.set(i, innerList);
        const context = (
          program: string,
          accounts: readonly AccountRef[],
          data: Uint8Array,
          depth: number,
          out: string[],
        ): InvokeContext => ({
          programId: program,
          accounts,
          data,
          slot,
          read,
          write(ref, account) {
            if (!ref.writable) throw new ProgramError(-1, `account ${ref.key} is not writable`);
            writes.set(ref.key, account);
          },
          log: (message) => out.push(`Program log: ${message}`),
          invoke(callee, calleeAccounts, calleeData, effect) {
            innerList.push({
              programIdIndex: callee.index,
              accounts: calleeAccounts.map((a) => a.index),
              data: calleeData,
              stackHeight: depth + 1,
            });
            out.push(`Program ${callee.key} invoke [${depth + 1}]`);
            const calleeLines: string[] = [];
            const calleeHandler = handlers.get(callee.key);
            if (effect !== undefined) effect();
            else if (calleeHandler !== undefined)
              calleeHandler(context(callee.key, calleeAccounts, calleeData, depth + 1, calleeLines));
            out.push(...calleeLines);
            if (!BUILTIN_CALLEES.has(callee.key))
              out.push(`Program ${callee.key} consumed ${CPI_UNITS} of ${CPI_UNITS * 200} compute units`);
            out.push(`Program ${callee.key} success`);
          },
          rentExempt,
          emit: (event) => events.push(event),
          onCommit: (apply) => commits.push(apply),
          scratch,
        });
        try {
          handler(context(programId, ix.accounts.map(refOf), ix.data, 1, lines));
        } catch (err) {
          const code = err instanceof ProgramError ? err.code : 0;
          const message = err instanceof Error ? err.message : String(err);
          lines.push(`Program log: ${message}`);
          return { ok: false, index: i, code: code < 0 ? 0 : code, logs, inner };
        }
      }
      return { ok: true, writes, logs, inner, events, commits };
    },
    onEvent(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    committed({ events, commits }) {
      for (const apply of commits) apply();
      for (const event of events) for (const listener of listeners) listener(event);
    },
  };
}
