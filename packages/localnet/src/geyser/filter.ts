/**
 * A client's `SubscribeRequest` as a filter over the stream's events, with the semantics of the
 * plugin's `filter.rs`: several named filters per kind, every update carrying in `filters` the names
 * that matched it; accounts by pubkey, owner, memcmp, datasize, token-account state, lamports and
 * `nonempty_txn_signature`, data sliced by `accounts_data_slice`; transactions by vote, failed,
 * signature, account_include / exclude / required (and `token_accounts` owner expansion); blocks
 * with their transactions and accounts narrowed by `account_include`; slots by commitment and
 * inter-slot statuses. A request it cannot honour throws a {@link FilterError} with the plugin's text.
 *
 * Not supported (rejected, so a client is not silently served less than it asked): cuckoo filters.
 * `entry` filters are accepted; the localnet produces no entries.
 */
import { create } from "@bufbuild/protobuf";
import bs58 from "bs58";
import {
  CommitmentLevel,
  SlotStatus,
  SubscribeUpdateSchema,
  TokenAccountExpansionControlFlag,
  type SubscribeRequest,
  type SubscribeRequestFilterAccountsFilter,
  type SubscribeUpdate,
} from "../../gen/geyser_pb.js";
import { accountInfo, transactionErrorProto, type AccountWrite, type DataSlice } from "./convert.ts";
import type { AccountEvent, BlockEvent, GeyserEvent, SlotEvent, TransactionEvent } from "./events.ts";

/** A request the server refuses (`InvalidArgument: failed to create filter: ...`). */
export class FilterError extends Error {}

const MAX_FILTER_NAME = 128;
const MAX_STATE_FILTERS = 4;
const MAX_MEMCMP_BYTES = 128;
const TOKEN_ACCOUNT_LEN = 165;
const MULTISIG_LEN = 355;
const ACCOUNT_TYPE_ACCOUNT = 2;

function pubkey(text: string): string {
  let bytes: Uint8Array;
  try {
    bytes = bs58.decode(text);
  } catch {
    throw new FilterError("Invalid Base58 string");
  }
  if (bytes.length !== 32) throw new FilterError("String is the wrong size");
  return text;
}

function pubkeys(texts: readonly string[]): Set<string> | null {
  return texts.length === 0 ? null : new Set(texts.map(pubkey));
}

function signature(text: string): string {
  let bytes: Uint8Array;
  try {
    bytes = bs58.decode(text);
  } catch {
    throw new FilterError("failed to decode string to signature");
  }
  if (bytes.length !== 64) throw new FilterError("string decoded to wrong size for signature");
  return text;
}

function checkName(name: string): string {
  if (name.length > MAX_FILTER_NAME) throw new FilterError(`the max allowed size of filter name is ${MAX_FILTER_NAME}`);
  return name;
}

/** spl-token(-2022)'s `valid_account_data`: an initialized token account. */
export function isTokenAccountData(data: Uint8Array): boolean {
  const initialized = data.length >= TOKEN_ACCOUNT_LEN && data[108] !== 0;
  if (data.length === TOKEN_ACCOUNT_LEN) return initialized;
  return (
    data.length > TOKEN_ACCOUNT_LEN &&
    data.length !== MULTISIG_LEN &&
    data[TOKEN_ACCOUNT_LEN] === ACCOUNT_TYPE_ACCOUNT &&
    initialized
  );
}

type Lamports = { op: "eq" | "ne" | "lt" | "gt"; value: bigint };

interface AccountState {
  memcmp: { offset: number; bytes: Uint8Array }[];
  datasize: number | null;
  tokenAccountState: boolean;
  lamports: Lamports[];
}

function accountState(filters: readonly SubscribeRequestFilterAccountsFilter[]): AccountState | null {
  if (filters.length > MAX_STATE_FILTERS) throw new FilterError(`Too many filters provided; max ${MAX_STATE_FILTERS}`);
  const state: AccountState = { memcmp: [], datasize: null, tokenAccountState: false, lamports: [] };
  for (const { filter } of filters) {
    switch (filter.case) {
      case "memcmp": {
        const { data, offset } = filter.value;
        let bytes: Uint8Array;
        if (data.case === "bytes") bytes = data.value;
        else if (data.case === "base58") {
          if (data.value.length > 175) throw new FilterError("data too large");
          try {
            bytes = bs58.decode(data.value);
          } catch {
            throw new FilterError("invalid base58");
          }
        } else if (data.case === "base64") {
          if (data.value.length > 172) throw new FilterError("data too large");
          if (!/^[A-Za-z0-9+/]*={0,2}$/.test(data.value) || data.value.length % 4 !== 0) {
            throw new FilterError("invalid base64");
          }
          bytes = Buffer.from(data.value, "base64");
        } else throw new FilterError("data for memcmp should be defined");
        if (bytes.length > MAX_MEMCMP_BYTES) throw new FilterError("data too large");
        state.memcmp.push({ offset: Number(offset), bytes });
        break;
      }
      case "datasize":
        if (state.datasize !== null) throw new FilterError("datasize used more than once");
        state.datasize = Number(filter.value);
        break;
      case "tokenAccountState":
        if (!filter.value) throw new FilterError("token_account_state only allowed to be true");
        state.tokenAccountState = true;
        break;
      case "lamports": {
        const { cmp } = filter.value;
        if (cmp.case === undefined) throw new FilterError("cmp for lamports should be defined");
        state.lamports.push({ op: cmp.case, value: cmp.value });
        break;
      }
      default:
        throw new FilterError("filter should be defined");
    }
  }
  const empty =
    state.memcmp.length === 0 && state.datasize === null && !state.tokenAccountState && state.lamports.length === 0;
  return empty ? null : state;
}

function stateMatches(state: AccountState, data: Uint8Array, lamports: bigint): boolean {
  if (state.datasize !== null && data.length !== state.datasize) return false;
  if (state.tokenAccountState && !isTokenAccountData(data)) return false;
  for (const { op, value } of state.lamports) {
    const ok =
      op === "eq"
        ? lamports === value
        : op === "ne"
          ? lamports !== value
          : op === "lt"
            ? lamports < value
            : lamports > value;
    if (!ok) return false;
  }
  for (const { offset, bytes } of state.memcmp) {
    if (data.length < offset + bytes.length) return false;
    for (let i = 0; i < bytes.length; i++) if (data[offset + i] !== bytes[i]) return false;
  }
  return true;
}

interface AccountsFilter {
  name: string;
  txnSignature: boolean | undefined;
  accounts: Set<string> | null;
  owners: Set<string> | null;
  state: AccountState | null;
}

function accountMatches(f: AccountsFilter, write: AccountWrite): boolean {
  if (f.txnSignature !== undefined && f.txnSignature !== (write.txnSignature !== undefined)) return false;
  if (f.accounts !== null && !f.accounts.has(write.address)) return false;
  if (f.owners !== null && !f.owners.has(write.owner)) return false;
  return f.state === null || stateMatches(f.state, write.data, write.lamports);
}

interface TransactionsFilter {
  name: string;
  vote: boolean | undefined;
  failed: boolean | undefined;
  signature: string | undefined;
  include: Set<string>;
  exclude: Set<string>;
  required: Set<string>;
  tokenAccounts: TokenAccountExpansionControlFlag | undefined;
}

function transactionMatches(f: TransactionsFilter, tx: TransactionEvent): boolean {
  if (f.vote !== undefined && f.vote !== tx.isVote) return false;
  if (f.failed !== undefined && f.failed !== tx.failed) return false;
  if (f.signature !== undefined && f.signature !== tx.record.signature) return false;
  const owners =
    f.tokenAccounts === undefined
      ? null
      : f.tokenAccounts === TokenAccountExpansionControlFlag.ALL
        ? tx.tokenOwnersAll()
        : tx.tokenOwnersChanged();
  const named = (key: string) => tx.keys.has(key) || (owners?.has(key) ?? false);
  for (const key of f.required) if (!named(key)) return false;
  if (f.include.size > 0 && ![...f.include].some(named)) return false;
  if (f.exclude.size > 0 && [...f.exclude].some(named)) return false;
  return true;
}

interface BlocksFilter {
  name: string;
  include: Set<string> | null;
  transactions: boolean;
  accounts: boolean;
}

interface SlotsFilter {
  name: string;
  byCommitment: boolean;
  interslot: boolean;
}

const CONFIRMATION_STATUS: Record<CommitmentLevel, SlotStatus> = {
  [CommitmentLevel.PROCESSED]: SlotStatus.SLOT_PROCESSED,
  [CommitmentLevel.CONFIRMED]: SlotStatus.SLOT_CONFIRMED,
  [CommitmentLevel.FINALIZED]: SlotStatus.SLOT_FINALIZED,
};

/** One client's parsed request. */
export class Filter {
  readonly commitment: CommitmentLevel;
  readonly slices: readonly DataSlice[];
  private readonly accounts: AccountsFilter[] = [];
  private readonly slots: SlotsFilter[] = [];
  private readonly transactions: TransactionsFilter[] = [];
  private readonly transactionsStatus: TransactionsFilter[] = [];
  private readonly blocks: BlocksFilter[] = [];
  private readonly blocksMeta: string[] = [];

  /** Parses a request; throws {@link FilterError} with the plugin's reason. */
  constructor(request: SubscribeRequest) {
    for (const [name, f] of Object.entries(request.accounts)) {
      if (f.cuckooAccountsFilter !== undefined)
        throw new FilterError("cuckoo filters are not supported by the localnet");
      this.accounts.push({
        name: checkName(name),
        txnSignature: f.nonemptyTxnSignature,
        accounts: pubkeys(f.account),
        owners: pubkeys(f.owner),
        state: accountState(f.filters),
      });
    }
    for (const [name, f] of Object.entries(request.slots)) {
      this.slots.push({
        name: checkName(name),
        byCommitment: f.filterByCommitment ?? false,
        interslot: f.interslotUpdates ?? false,
      });
    }
    const transactions = (map: SubscribeRequest["transactions"], into: TransactionsFilter[]) => {
      for (const [name, f] of Object.entries(map)) {
        if (f.cuckooAccountInclude !== undefined)
          throw new FilterError("cuckoo filters are not supported by the localnet");
        if (f.tokenAccounts !== undefined && f.tokenAccounts !== 0 && f.tokenAccounts !== 1) {
          throw new FilterError(
            `invalid token_accounts mode value ${f.tokenAccounts}; expected ALL (0) or BALANCE_CHANGED (1)`,
          );
        }
        into.push({
          name: checkName(name),
          vote: f.vote,
          failed: f.failed,
          signature: f.signature === undefined ? undefined : signature(f.signature),
          include: pubkeys(f.accountInclude) ?? new Set(),
          exclude: pubkeys(f.accountExclude) ?? new Set(),
          required: pubkeys(f.accountRequired) ?? new Set(),
          tokenAccounts: f.tokenAccounts,
        });
      }
    };
    transactions(request.transactions, this.transactions);
    transactions(request.transactionsStatus, this.transactionsStatus);
    for (const name of Object.keys(request.entry)) checkName(name);
    for (const [name, f] of Object.entries(request.blocks)) {
      if (f.cuckooAccountInclude !== undefined)
        throw new FilterError("cuckoo filters are not supported by the localnet");
      this.blocks.push({
        name: checkName(name),
        include: pubkeys(f.accountInclude),
        transactions: f.includeTransactions ?? true,
        accounts: f.includeAccounts ?? false,
      });
    }
    for (const name of Object.keys(request.blocksMeta)) this.blocksMeta.push(checkName(name));
    const commitment = request.commitment ?? CommitmentLevel.PROCESSED;
    if (!(commitment in CONFIRMATION_STATUS)) {
      throw new FilterError(`failed to create CommitmentLevel from ${commitment}`);
    }
    this.commitment = commitment;
    const slices = request.accountsDataSlice.map(
      (s): DataSlice => [Number(s.offset), Number(s.offset) + Number(s.length)],
    );
    slices.forEach(([start], i) => {
      if (slices.slice(i + 1).some(([later]) => start > later)) {
        throw new FilterError("data slices out of order");
      }
      if (slices.slice(0, i).some(([, end]) => start < end)) {
        throw new FilterError("data slices overlapped");
      }
    });
    this.slices = slices;
  }

  /** Does the client want account writes (so the hub reads them for it)? */
  get wantsAccounts(): boolean {
    return this.accounts.length > 0 || this.blocks.some((b) => b.accounts);
  }

  /** The updates this client gets for one event (none, one, or one per block filter). */
  updates(event: GeyserEvent): SubscribeUpdate[] {
    switch (event.kind) {
      case "slot":
        return this.slotUpdates(event);
      case "account":
        return this.accountUpdates(event);
      case "transaction":
        return this.transactionUpdates(event);
      case "block":
        return this.blockUpdates(event);
      case "blockMeta":
        return this.blocksMeta.length === 0
          ? []
          : [
              create(SubscribeUpdateSchema, {
                filters: this.blocksMeta,
                updateOneof: { case: "blockMeta", value: event.of.meta() },
                createdAt: event.createdAt,
              }),
            ];
    }
  }

  private slotUpdates(event: SlotEvent): SubscribeUpdate[] {
    const interslot =
      event.status === SlotStatus.SLOT_PROCESSED ||
      event.status === SlotStatus.SLOT_CONFIRMED ||
      event.status === SlotStatus.SLOT_FINALIZED;
    const names = this.slots
      .filter(
        (f) => (!f.byCommitment || CONFIRMATION_STATUS[this.commitment] === event.status) && (f.interslot || interslot),
      )
      .map((f) => f.name);
    if (names.length === 0) return [];
    return [
      create(SubscribeUpdateSchema, {
        filters: names,
        updateOneof: { case: "slot", value: { slot: event.slot, parent: event.parent, status: event.status } },
        createdAt: event.createdAt,
      }),
    ];
  }

  private accountUpdates(event: AccountEvent): SubscribeUpdate[] {
    const names = this.accounts.filter((f) => accountMatches(f, event.write)).map((f) => f.name);
    if (names.length === 0) return [];
    return [
      create(SubscribeUpdateSchema, {
        filters: names,
        updateOneof: {
          case: "account",
          value: { account: accountInfo(event.write, this.slices), slot: event.write.slot, isStartup: false },
        },
        createdAt: event.createdAt,
      }),
    ];
  }

  private transactionUpdates(event: TransactionEvent): SubscribeUpdate[] {
    const out: SubscribeUpdate[] = [];
    const full = this.transactions.filter((f) => transactionMatches(f, event)).map((f) => f.name);
    if (full.length > 0) {
      out.push(
        create(SubscribeUpdateSchema, {
          filters: full,
          updateOneof: { case: "transaction", value: { transaction: event.info(), slot: event.slot } },
          createdAt: event.createdAt,
        }),
      );
    }
    const status = this.transactionsStatus.filter((f) => transactionMatches(f, event)).map((f) => f.name);
    if (status.length > 0) {
      out.push(
        create(SubscribeUpdateSchema, {
          filters: status,
          updateOneof: {
            case: "transactionStatus",
            value: {
              slot: event.slot,
              signature: event.record.tx.signatures[0],
              isVote: event.isVote,
              index: BigInt(event.record.index),
              err: transactionErrorProto(event.record.outcome.err),
            },
          },
          createdAt: event.createdAt,
        }),
      );
    }
    return out;
  }

  private blockUpdates(event: BlockEvent): SubscribeUpdate[] {
    return this.blocks.map((f) => {
      const meta = event.meta();
      const transactions = f.transactions
        ? event.transactions.filter((tx) => f.include === null || [...f.include].some((k) => tx.keys.has(k)))
        : [];
      const accounts = f.accounts
        ? event.accounts.filter((a) => f.include === null || f.include.has(a.write.address))
        : [];
      return create(SubscribeUpdateSchema, {
        filters: [f.name],
        updateOneof: {
          case: "block",
          value: {
            slot: meta.slot,
            blockhash: meta.blockhash,
            rewards: meta.rewards,
            blockTime: meta.blockTime,
            blockHeight: meta.blockHeight,
            parentSlot: meta.parentSlot,
            parentBlockhash: meta.parentBlockhash,
            executedTransactionCount: meta.executedTransactionCount,
            transactions: transactions.map((tx) => tx.info()),
            updatedAccountCount: BigInt(event.writtenCount),
            accounts: accounts.map((a) => accountInfo(a.write, this.slices)),
            entriesCount: 0n,
            entries: [],
          },
        },
        createdAt: event.createdAt,
      });
    });
  }
}
