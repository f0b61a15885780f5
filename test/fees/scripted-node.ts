/**
 * An in-memory stand-in for a Solana node, for in-process unit tests of the fee market: it answers the
 * four methods the market uses from scripted state, with JSON-RPC error codes as agave sends them, and
 * throws on anything else. Transactions in its blocks are real wire transactions compiled by kit.
 * (Integration tests run the market against the real localnet instead.)
 */
import { randomBytes } from "node:crypto";
import {
  appendTransactionMessageInstructions,
  compileTransaction,
  compressTransactionMessageUsingAddressLookupTables,
  createNoopSigner,
  createSolanaRpcFromTransport,
  createTransactionMessage,
  getAddressDecoder,
  getAddressEncoder,
  getBase58Decoder,
  getTransactionEncoder,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
} from "@solana/kit";
import type { Address, Blockhash } from "@solana/kit";
import { getSetComputeUnitPriceInstruction } from "@solana-program/compute-budget";
import { getTransferSolInstruction } from "@solana-program/system";
import type { FeeMarketRpc } from "../../src/fees/fee-market.ts";

/** A fresh random address. */
export function randomAddress(): Address {
  return getAddressDecoder().decode(randomBytes(32));
}

const BLOCKHASH = getBase58Decoder().decode(new Uint8Array(32).fill(7)) as Blockhash;

/**
 * A real wire transaction (unsigned) from `payer` that sets `price` (none when undefined) and
 * write-locks each of `writable` (as transfer destinations). With `tables`, v0 and compressed through them.
 */
export function pricedTransaction(options: {
  price?: bigint;
  payer?: Address;
  writable?: readonly Address[];
  tables?: Record<Address, Address[]>;
}): Uint8Array {
  const payer = createNoopSigner(options.payer ?? randomAddress());
  const instructions = [
    ...(options.price === undefined ? [] : [getSetComputeUnitPriceInstruction({ microLamports: options.price })]),
    ...(options.writable ?? []).map((destination) =>
      getTransferSolInstruction({ source: payer, destination, amount: 1n }),
    ),
  ];
  let message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayer(payer.address, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: BLOCKHASH, lastValidBlockHeight: 1000n }, m),
    (m) => appendTransactionMessageInstructions(instructions, m),
  );
  if (options.tables)
    message = compressTransactionMessageUsingAddressLookupTables(message, options.tables) as typeof message;
  return new Uint8Array(getTransactionEncoder().encode(compileTransaction(message)));
}

/** Lookup table account data: the 56-byte header (type 1 = initialized, never deactivated) and the addresses. */
export function lookupTableData(addresses: readonly Address[]): Uint8Array {
  const data = new Uint8Array(56 + 32 * addresses.length);
  const view = new DataView(data.buffer);
  view.setUint32(0, 1, true);
  view.setBigUint64(4, 2n ** 64n - 1n, true);
  addresses.forEach((a, i) => data.set(getAddressEncoder().encode(a), 56 + 32 * i));
  return data;
}

/** One slot's content in the script. */
export type ScriptedSlot =
  | { kind: "block"; transactions: { wire: Uint8Array; loadedWritable?: readonly string[] }[] }
  | { kind: "skipped" }
  | { kind: "not-available" };

/** The scripted node. Mutate its fields between ticks. */
export interface ScriptedNode {
  rpc: FeeMarketRpc;
  tip: bigint;
  slots: Map<bigint, ScriptedSlot>;
  /** getBlock answers "method not found", as providers that do not serve it do. */
  refuseGetBlock: boolean;
  /** Every call fails as if the network were down. */
  down: boolean;
  recentFees: { slot: number; prioritizationFee: number }[];
  /** Per-accounts answers for getRecentPrioritizationFees (key: accounts joined by ","). */
  recentFeesFor: Map<string, { slot: number; prioritizationFee: number }[]>;
  accounts: Map<string, { owner: string; data: Uint8Array }>;
  /** Calls per method. */
  calls: Record<string, number>;
  /** Params of each getRecentPrioritizationFees call. */
  recentFeesParams: unknown[][];
  /** Adds a block at `slot` with these transactions. */
  block(slot: bigint, transactions: Uint8Array[]): void;
}

/** Creates an empty node at slot 0. */
export function createScriptedNode(): ScriptedNode {
  const node: ScriptedNode = {
    rpc: undefined as unknown as FeeMarketRpc,
    tip: 0n,
    slots: new Map(),
    refuseGetBlock: false,
    down: false,
    recentFees: [],
    recentFeesFor: new Map(),
    accounts: new Map(),
    calls: {},
    recentFeesParams: [],
    block(slot, transactions) {
      node.slots.set(slot, { kind: "block", transactions: transactions.map((wire) => ({ wire })) });
    },
  };
  const ok = (id: unknown, result: unknown) => ({ jsonrpc: "2.0", id, result });
  const fail = (id: unknown, code: number, message: string) => ({ jsonrpc: "2.0", id, error: { code, message } });

  node.rpc = createSolanaRpcFromTransport(async ({ payload }) => {
    const { id, method, params } = payload as { id: unknown; method: string; params: unknown[] };
    node.calls[method] = (node.calls[method] ?? 0) + 1;
    if (node.down) throw new TypeError("fetch failed");
    switch (method) {
      case "getSlot":
        return ok(id, Number(node.tip)) as never;
      case "getBlock": {
        if (node.refuseGetBlock) return fail(id, -32601, "Method not found") as never;
        const slot = BigInt(params[0] as number);
        const content =
          slot > node.tip ? { kind: "not-available" as const } : (node.slots.get(slot) ?? { kind: "skipped" as const });
        if (content.kind === "skipped")
          return fail(
            id,
            -32007,
            `Slot ${slot} was skipped, or missing due to ledger jump to recent snapshot`,
          ) as never;
        if (content.kind === "not-available") return fail(id, -32004, `Block not available for slot ${slot}`) as never;
        return ok(id, {
          blockhash: BLOCKHASH,
          previousBlockhash: BLOCKHASH,
          parentSlot: Number(slot) - 1,
          blockHeight: Number(slot),
          blockTime: null,
          transactions: content.transactions.map((t) => ({
            transaction: [Buffer.from(t.wire).toString("base64"), "base64"],
            meta: { err: null, fee: 5000, loadedAddresses: { writable: t.loadedWritable ?? [], readonly: [] } },
            version: 0,
          })),
        }) as never;
      }
      case "getRecentPrioritizationFees": {
        const accounts = (params?.[0] as string[] | undefined) ?? [];
        node.recentFeesParams.push(accounts);
        return ok(
          id,
          accounts.length === 0 ? node.recentFees : (node.recentFeesFor.get(accounts.join(",")) ?? node.recentFees),
        ) as never;
      }
      case "getMultipleAccounts": {
        const addresses = params[0] as string[];
        return ok(id, {
          context: { slot: Number(node.tip) },
          value: addresses.map((a) => {
            const account = node.accounts.get(a);
            if (account === undefined) return null;
            return {
              owner: account.owner,
              data: [Buffer.from(account.data).toString("base64"), "base64"],
              lamports: 1_000_000,
              executable: false,
              rentEpoch: 0,
              space: account.data.length,
            };
          }),
        }) as never;
      }
      default:
        throw new Error(`scripted node: unexpected method ${method}`);
    }
  });
  return node;
}
