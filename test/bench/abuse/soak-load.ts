/**
 * The soak's mixed workload, from Connect's own gRPC client (h2c): reads of every service over the seeded
 * world, and real transfers from the demo wallet, half confirmed and waited for, half submitted and then
 * watched (WatchStatus) to their end. Each call's outcome is counted by code.
 */
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { generateKeyPairSigner } from "@solana/kit";
import type { Address, Blockhash, KeyPairSigner } from "@solana/kit";
import { AccountService } from "../../../gen/solgate/v1/account_service_pb.js";
import { CollectionService } from "../../../gen/solgate/v1/collection_service_pb.js";
import { FeeService } from "../../../gen/solgate/v1/fee_service_pb.js";
import { PriorityLevel } from "../../../gen/solgate/v1/fee_pb.js";
import { ProgramService } from "../../../gen/solgate/v1/program_service_pb.js";
import { TokenService } from "../../../gen/solgate/v1/token_service_pb.js";
import { TransactionService } from "../../../gen/solgate/v1/transaction_service_pb.js";
import { WalletService } from "../../../gen/solgate/v1/wallet_service_pb.js";
import { draftTransfer } from "../../fees/on-chain.ts";
import { transferTransaction } from "../../transactions/chain-fixture.ts";
import { CHAIN } from "./gateway-under-test.ts";
import type { GatewayUnderTest } from "./gateway-under-test.ts";

/** What the load needs. */
export interface SoakOptions {
  gateway: GatewayUnderTest;
  payer: KeyPairSigner;
  latest(): Promise<{ blockhash: Blockhash; lastValidBlockHeight: bigint }>;
  concurrency: number;
}

/** Starts the load at once; `pause` waits for everything in flight (watches included). */
export function startSoak(options: SoakOptions) {
  const { gateway, payer } = options;
  const transport = createGrpcTransport({ baseUrl: gateway.origin });
  const headers = { authorization: `Bearer ${gateway.apiKey}` };
  const fees = createClient(FeeService, transport);
  const collections = createClient(CollectionService, transport);
  const programs = createClient(ProgramService, transport);
  const transactions = createClient(TransactionService, transport);
  const accounts = createClient(AccountService, transport);
  const wallets = createClient(WalletService, transport);
  const tokens = createClient(TokenService, transport);
  const { manifest } = gateway;
  const collection = manifest.collections.find((c) => c.seeded)!.mint;
  const gate = manifest.fungibleMints.find((m) => m.symbol === "GATE")!.mint;
  const owner = manifest.demoWallet.address;
  const chain = CHAIN;
  const counts = new Map<string, number>();
  const signatures: string[] = [];
  let blockhash: { blockhash: Blockhash; lastValidBlockHeight: bigint } | undefined;
  let blockhashAt = 0;
  let running = true;
  let stopped = false;
  let resumeLoops = () => {};
  const inFlight = new Set<Promise<unknown>>();

  const count = (key: string) => counts.set(key, (counts.get(key) ?? 0) + 1);
  async function call(name: string, fn: () => Promise<unknown>): Promise<void> {
    try {
      await fn();
      count(`${name} ok`);
    } catch (e) {
      count(`${name} ${Code[ConnectError.from(e).code]}`);
    }
  }
  async function freshBlockhash() {
    if (blockhash === undefined || Date.now() - blockhashAt > 2000) {
      blockhash = await options.latest();
      blockhashAt = Date.now();
    }
    return blockhash;
  }
  async function transfer() {
    const tx = await transferTransaction({
      payer,
      to: (await generateKeyPairSigner()).address,
      lamports: 1_000_000n,
      blockhash: await freshBlockhash(),
    });
    signatures.push(tx.signature);
    if (signatures.length > 100) signatures.shift();
    return tx;
  }
  const draft = Buffer.from(draftTransfer(payer.address, [owner as Address]));
  let cursor = "";

  const ops: [number, () => Promise<void>][] = [
    [3, () => call("GetFees", () => fees.getFees({ chain }, { headers }))],
    [1, () => call("EstimateFees", () => fees.estimateFees({ chain, transaction: draft }, { headers }))],
    [1, () => call("GetCollection", () => collections.getCollection({ chain, address: collection }, { headers }))],
    [
      1,
      () =>
        call("ListCollectionNfts", async () => {
          const page = await collections.listCollectionNfts(
            { chain, address: collection, limit: 20, cursor },
            { headers },
          );
          cursor = page.nextCursor ?? "";
        }),
    ],
    [
      1,
      () =>
        call("ListProgramAccounts", () =>
          programs.listProgramAccounts(
            {
              chain,
              programId: "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA",
              size: 165n,
              match: [`0:${gate}`],
              limit: 20,
            },
            { headers },
          ),
        ),
    ],
    [1, () => call("GetAccount", () => accounts.getAccount({ chain, address: owner }, { headers }))],
    [1, () => call("ListWalletTokens", () => wallets.listWalletTokens({ chain, owner }, { headers }))],
    [1, () => call("ListWalletNfts", () => wallets.listWalletNfts({ chain, owner }, { headers }))],
    [1, () => call("ListTokenHolders", () => tokens.listTokenHolders({ chain, mint: gate, limit: 100 }, { headers }))],
    [
      1,
      () =>
        call("PrepareTransaction", () =>
          transactions.prepareTransaction(
            { chain, transaction: draft, priorityFee: { choice: { case: "level", value: PriorityLevel.AUTO } } },
            { headers },
          ),
        ),
    ],
    [
      1,
      () =>
        call("GetTransactionStatus", async () => {
          if (signatures.length > 0)
            await transactions.getTransactionStatus(
              { chain, signature: signatures[Math.floor(Math.random() * signatures.length)] },
              { headers },
            );
        }),
    ],
    [
      1,
      async () =>
        call("SendTransaction confirm", async () =>
          transactions.sendTransaction({ chain, transaction: (await transfer()).wire, confirm: true }, { headers }),
        ),
    ],
    [
      1,
      async () =>
        call("SendTransaction+WatchStatus", async () => {
          const tx = await transfer();
          await transactions.sendTransaction({ chain, transaction: tx.wire, confirm: false }, { headers });
          // Watched to the end in the background (about 13 s to finalized), as a client would.
          const watch = call("WatchStatus", async () => {
            for await (const _ of transactions.watchStatus({ chain, signature: tx.signature }, { headers })) {
              // each record or heartbeat
            }
          });
          inFlight.add(watch);
          void watch.finally(() => inFlight.delete(watch));
        }),
    ],
  ];
  const weights = ops.reduce((a, [w]) => a + w, 0);
  const pickOp = () => {
    let r = Math.random() * weights;
    for (const [w, op] of ops) if ((r -= w) < 0) return op;
    return ops[0][1];
  };

  const loop = async () => {
    while (!stopped) {
      if (!running) {
        await new Promise<void>((resolve) => {
          const previous = resumeLoops;
          resumeLoops = () => {
            previous();
            resolve();
          };
        });
        continue;
      }
      const op = pickOp()();
      inFlight.add(op);
      await op;
      inFlight.delete(op);
    }
  };
  const loops = Array.from({ length: options.concurrency }, loop);

  return {
    async pause() {
      running = false;
      while (inFlight.size > 0) await Promise.all([...inFlight]);
    },
    resume() {
      running = true;
      const r = resumeLoops;
      resumeLoops = () => {};
      r();
    },
    async stop() {
      stopped = true;
      this.resume();
      await Promise.all(loops);
    },
    internalErrors: () => [...counts].filter(([k]) => / (Internal|Unknown)$/.test(k)).reduce((a, [, n]) => a + n, 0),
    summary: () =>
      [...counts]
        .sort()
        .map(([k, n]) => `${k} ${n}`)
        .join(", "),
  };
}
