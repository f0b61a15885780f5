/**
 * The Geyser filter on its own (no server): account data filters (memcmp, datasize, token-account
 * state, lamports), data slices, several named filters, slot statuses by commitment, the requests it
 * refuses; and the bincode transaction errors, read back by the official client's decoder.
 */
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { txErrDecode } from "@triton-one/yellowstone-grpc";
import bs58 from "bs58";
import { describe, expect, it } from "vitest";
import {
  CommitmentLevel,
  SlotStatus,
  SubscribeRequestSchema,
  type SubscribeRequest,
  type SubscribeUpdateAccount,
} from "../../gen/geyser_pb.js";
import { encodeTransactionError, UNTAGGED_INSTRUCTION_ERRORS } from "../../src/geyser/convert.ts";
import type { AccountEvent } from "../../src/geyser/events.ts";
import { Filter, FilterError } from "../../src/geyser/filter.ts";
import {
  INSTRUCTION_ERROR_NAMES,
  TRANSACTION_ERROR_NAMES,
  type TransactionErrorJson,
} from "../../src/wire/transaction-error.ts";

const TOKEN_PROGRAM = "TokenkegQfeZyiNwAJbNbGqPVGokB1EaeEdELv9xi1f";
const MINT = bs58.encode(new Uint8Array(32).fill(7));
const OWNER = bs58.encode(new Uint8Array(32).fill(9));

function tokenAccountData(initialized = true): Uint8Array {
  const data = new Uint8Array(165);
  data.set(bs58.decode(MINT), 0);
  data.set(bs58.decode(OWNER), 32);
  new DataView(data.buffer).setBigUint64(64, 1234n, true);
  data[108] = initialized ? 1 : 0;
  return data;
}

function accountEvent(data: Uint8Array, lamports = 2_039_280n, owner = TOKEN_PROGRAM): AccountEvent {
  const address = bs58.encode(new Uint8Array(32).fill(3));
  return {
    kind: "account",
    createdAt: timestampFromMs(0),
    write: {
      slot: 5n,
      address,
      pubkey: bs58.decode(address),
      owner,
      ownerBytes: bs58.decode(owner),
      lamports,
      executable: false,
      rentEpoch: 0n,
      data,
      writeVersion: 1n,
      txnSignature: undefined,
    },
  };
}

const filter = (init: Parameters<typeof create<typeof SubscribeRequestSchema>>[1]) =>
  new Filter(create(SubscribeRequestSchema, init) as SubscribeRequest);

const matched = (f: Filter, event: AccountEvent) => f.updates(event).flatMap((u) => u.filters);

describe("account filters", () => {
  const f = filter({
    accounts: {
      tokenOfMint: {
        owner: [TOKEN_PROGRAM],
        filters: [
          { filter: { case: "datasize", value: 165n } },
          { filter: { case: "tokenAccountState", value: true } },
          { filter: { case: "memcmp", value: { offset: 0n, data: { case: "base58", value: MINT } } } },
          { filter: { case: "memcmp", value: { offset: 32n, data: { case: "bytes", value: bs58.decode(OWNER) } } } },
        ],
      },
      rentExempt: { filters: [{ filter: { case: "lamports", value: { cmp: { case: "gt", value: 2_000_000n } } } }] },
      notThatOwner: {
        filters: [
          {
            filter: {
              case: "memcmp",
              value: { offset: 32n, data: { case: "base64", value: Buffer.alloc(32, 1).toString("base64") } },
            },
          },
        ],
      },
    },
  });

  it("names every filter a write passes", () => {
    expect(matched(f, accountEvent(tokenAccountData())).sort()).toEqual(["rentExempt", "tokenOfMint"]);
  });

  it("checks the token-account state, the size, the bytes and the lamports", () => {
    expect(matched(f, accountEvent(tokenAccountData(false)))).toEqual(["rentExempt"]);
    expect(matched(f, accountEvent(tokenAccountData().subarray(0, 164)))).toEqual(["rentExempt"]);
    const otherMint = tokenAccountData();
    otherMint[0] = 8;
    expect(matched(f, accountEvent(otherMint))).toEqual(["rentExempt"]);
    expect(matched(f, accountEvent(tokenAccountData(), 1_000n))).toEqual(["tokenOfMint"]);
    expect(matched(f, accountEvent(tokenAccountData(), 2_039_280n, OWNER))).toEqual(["rentExempt"]);
  });

  it("slices the data as asked, leaving out slices past its end", () => {
    const sliced = filter({
      accounts: { all: {} },
      accountsDataSlice: [
        { offset: 0n, length: 32n },
        { offset: 64n, length: 8n },
        { offset: 160n, length: 10n },
      ],
    });
    const [update] = sliced.updates(accountEvent(tokenAccountData()));
    const data = (update!.updateOneof.value as SubscribeUpdateAccount).account!.data;
    expect(data).toHaveLength(40);
    expect(bs58.encode(data.subarray(0, 32))).toBe(MINT);
    expect(new DataView(data.buffer, data.byteOffset).getBigUint64(32, true)).toBe(1234n);
  });
});

describe("slot filters", () => {
  const slot = (status: SlotStatus) => ({
    kind: "slot" as const,
    slot: 9n,
    parent: 8n,
    status,
    createdAt: timestampFromMs(0),
  });
  it("keeps statuses at the commitment when filter_by_commitment, inter-slot ones when asked", () => {
    const f = filter({
      commitment: CommitmentLevel.CONFIRMED,
      slots: { mine: { filterByCommitment: true }, every: {}, inter: { interslotUpdates: true } },
    });
    expect(
      f
        .updates(slot(SlotStatus.SLOT_CONFIRMED))
        .flatMap((u) => u.filters)
        .sort(),
    ).toEqual(["every", "inter", "mine"]);
    expect(
      f
        .updates(slot(SlotStatus.SLOT_PROCESSED))
        .flatMap((u) => u.filters)
        .sort(),
    ).toEqual(["every", "inter"]);
    expect(f.updates(slot(SlotStatus.SLOT_CREATED_BANK)).flatMap((u) => u.filters)).toEqual(["inter"]);
  });
});

describe("requests it refuses", () => {
  const refused = (init: Parameters<typeof filter>[0]) => {
    try {
      filter(init);
    } catch (error) {
      expect(error).toBeInstanceOf(FilterError);
      return (error as Error).message;
    }
    throw new Error("accepted");
  };
  const accounts = (filters: object[]) => ({ accounts: { a: { filters } } }) as Parameters<typeof filter>[0];
  it("names the reason, in the plugin's words", () => {
    expect(refused({ accounts: { a: { owner: ["0OIl"] } } })).toBe("Invalid Base58 string");
    expect(refused({ accounts: { a: { account: [bs58.encode(new Uint8Array(31))] } } })).toBe(
      "String is the wrong size",
    );
    expect(refused({ transactions: { t: { signature: MINT } } })).toBe("string decoded to wrong size for signature");
    expect(
      refused(accounts([{ filter: { case: "datasize", value: 1n } }, { filter: { case: "datasize", value: 2n } }])),
    ).toBe("datasize used more than once");
    expect(refused(accounts(Array(5).fill({ filter: { case: "datasize", value: 1n } })))).toBe(
      "Too many filters provided; max 4",
    );
    expect(refused(accounts([{ filter: { case: "tokenAccountState", value: false } }]))).toBe(
      "token_account_state only allowed to be true",
    );
    expect(refused(accounts([{ filter: { case: "memcmp", value: { offset: 0n } } }]))).toBe(
      "data for memcmp should be defined",
    );
    expect(refused(accounts([{}]))).toBe("filter should be defined");
    expect(
      refused({
        accountsDataSlice: [
          { offset: 10n, length: 5n },
          { offset: 0n, length: 5n },
        ],
      }),
    ).toBe("data slices out of order");
    expect(
      refused({
        accountsDataSlice: [
          { offset: 0n, length: 10n },
          { offset: 5n, length: 5n },
        ],
      }),
    ).toBe("data slices overlapped");
    expect(refused({ commitment: 7 as CommitmentLevel })).toBe("failed to create CommitmentLevel from 7");
  });
});

describe("transaction errors as bincode", () => {
  const decode = (err: TransactionErrorJson) => txErrDecode.decode(encodeTransactionError(err));
  it("every error the localnet reports decodes to itself with the official client's decoder", () => {
    const errors: TransactionErrorJson[] = [
      ...TRANSACTION_ERROR_NAMES,
      ...INSTRUCTION_ERROR_NAMES.map((n): TransactionErrorJson => ({ InstructionError: [3, n] })),
      { InstructionError: [1, { Custom: 6001 }] },
      { DuplicateInstruction: 2 },
      { InsufficientFundsForRent: { account_index: 4 } },
      { ProgramExecutionTemporarilyRestricted: { account_index: 1 } },
    ];
    for (const err of errors) expect(decode(err), JSON.stringify(err)).toEqual(err);
    expect(UNTAGGED_INSTRUCTION_ERRORS).toEqual([]);
  });
});

describe("transaction and block filters", () => {
  const KEY = (n: number) => bs58.encode(new Uint8Array(32).fill(n));
  const SIG = bs58.encode(new Uint8Array(64).fill(5));
  const tx = (keys: string[], opts: { vote?: boolean; failed?: boolean; owners?: string[] } = {}) =>
    ({
      kind: "transaction",
      slot: 5n,
      record: {
        signature: SIG,
        index: 0,
        tx: { signatures: [bs58.decode(SIG)] },
        outcome: { err: opts.failed ? "AccountInUse" : null },
      },
      isVote: opts.vote ?? false,
      failed: opts.failed ?? false,
      keys: new Set(keys),
      info: () => ({}),
      tokenOwnersAll: () => new Set(opts.owners ?? []),
      tokenOwnersChanged: () => new Set<string>(),
      createdAt: timestampFromMs(0),
    }) as never;
  const names = (f: Filter, event: never) => f.updates(event).map((u) => [u.updateOneof.case, ...u.filters].join(":"));

  it("matches vote, failed, signature, include, exclude, required and token owners as the plugin does", () => {
    const f = filter({
      transactions: {
        votes: { vote: true },
        failures: { failed: true },
        bySignature: { signature: SIG },
        otherSignature: { signature: bs58.encode(new Uint8Array(64).fill(6)) },
        anyOfOneTwo: { accountInclude: [KEY(1), KEY(2)] },
        notThree: { accountExclude: [KEY(3)] },
        oneAndTwo: { accountRequired: [KEY(1), KEY(2)] },
        ownerNine: { accountInclude: [KEY(9)], tokenAccounts: 0 },
      },
      transactionsStatus: { status: { accountInclude: [KEY(1)] } },
    });
    expect(names(f, tx([KEY(1)]))).toEqual([
      "transaction:bySignature:anyOfOneTwo:notThree",
      "transactionStatus:status",
    ]);
    expect(names(f, tx([KEY(1), KEY(2), KEY(3)], { vote: true, failed: true }))).toEqual([
      "transaction:votes:failures:bySignature:anyOfOneTwo:oneAndTwo",
      "transactionStatus:status",
    ]);
    expect(names(f, tx([KEY(4)], { owners: [KEY(9)] }))).toEqual(["transaction:bySignature:notThree:ownerNine"]);
  });

  it("sends one block per block filter, its transactions and accounts narrowed by account_include", () => {
    const txs = [tx([KEY(1)]), tx([KEY(2)])];
    const accounts = [accountEvent(tokenAccountData())];
    const event = {
      kind: "block",
      block: {},
      transactions: txs,
      accounts,
      writtenCount: 3,
      meta: () => ({ slot: 5n, blockhash: "h", executedTransactionCount: 2n }),
      createdAt: timestampFromMs(0),
    } as never;
    const f = filter({
      blocks: {
        all: { includeAccounts: true },
        one: { accountInclude: [KEY(1)] },
        none: { includeTransactions: false },
      },
    });
    const updates = f.updates(event).map((u) => {
      const block = u.updateOneof.value as {
        transactions: unknown[];
        accounts: unknown[];
        updatedAccountCount: bigint;
      };
      return [u.filters[0], block.transactions.length, block.accounts.length, block.updatedAccountCount];
    });
    expect(updates).toEqual([
      ["all", 2, 1, 3n],
      ["one", 1, 0, 3n],
      ["none", 0, 0, 3n],
    ]);
  });
});
