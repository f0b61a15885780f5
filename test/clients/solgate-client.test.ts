/**
 * @solgate/client (packages/client) against the real gateway on its localnet, over each protocol of
 * the Node entry (gRPC, gRPC-Web, Connect, through connect-node) and the browser entry's (gRPC-Web,
 * Connect, through connect-web's fetch, which Node has too): all seven services answer with what the
 * localnet itself holds, a real transfer is prepared, signed, sent and watched to finalized, a call
 * without the key fails UNAUTHENTICATED with its reason, and a bad address INVALID_ADDRESS.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  appendTransactionMessageInstruction,
  type Blockhash,
  compileTransaction,
  createKeyPairSignerFromBytes,
  createTransactionMessage,
  generateKeyPairSigner,
  getSignatureFromTransaction,
  getTransactionDecoder,
  getTransactionEncoder,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransaction,
} from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import { createSolgateClient, errorReason, TransactionStatus } from "../../packages/client/src/index.ts";
import type { SolgateClient } from "../../packages/client/src/index.ts";
import { createSolgateClient as createWebClient } from "../../packages/client/src/web.ts";
import { startRestGateway } from "../rest/rest-gateway.ts";
import type { RestGateway } from "../rest/rest-gateway.ts";
import { REST_API_KEY } from "../rest/rest-gateway.ts";

const TOKEN_PROGRAM = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";

let gw: RestGateway;
beforeAll(async () => {
  gw = await startRestGateway();
  // Wait until the fee market has seen prioritized traffic, so every protocol's calls see fee levels.
  const fees = createSolgateClient({ baseUrl: gw.url, apiKey: REST_API_KEY }).fee;
  const deadline = Date.now() + 30_000;
  while ((await fees.getFees({})).estimate?.priority === undefined) {
    if (Date.now() > deadline) throw new Error("no fee levels after 30 s");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
});
afterAll(async () => {
  await gw?.stop();
});

/** A JSON-RPC call to the localnet itself: the answers the gateway's must match. */
async function chain(method: string, params: unknown[]): Promise<any> {
  const response = await fetch(gw.gateway.localnetUrl!, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = (await response.json()) as { result?: unknown; error?: { message: string } };
  if (body.result === undefined) throw new Error(`${method}: ${body.error?.message}`);
  return body.result;
}

const clients: Record<string, (apiKey?: string) => SolgateClient> = {
  "node grpc": (apiKey) => createSolgateClient({ baseUrl: gw.url, apiKey, protocol: "grpc" }),
  "node grpc-web": (apiKey) => createSolgateClient({ baseUrl: gw.url, apiKey, protocol: "grpc-web" }),
  "node connect (HTTP/1.1)": (apiKey) =>
    createSolgateClient({ baseUrl: gw.url, apiKey, protocol: "connect", httpVersion: "1.1" }),
  "web grpc-web": (apiKey) => createWebClient({ baseUrl: gw.url, apiKey, protocol: "grpc-web" }),
  "web connect": (apiKey) => createWebClient({ baseUrl: gw.url, apiKey, protocol: "connect" }),
};

describe.each(Object.keys(clients))("createSolgateClient, %s", (name) => {
  const client = () => clients[name](REST_API_KEY);

  it("reads fees, a collection, an account, a wallet, token holders and program accounts as the chain has them", async () => {
    const solgate = client();
    const { manifest } = gw;
    const seeded = manifest.collections.find((c) => c.seeded)!;
    const gate = manifest.fungibleMints.find((m) => m.symbol === "GATE")!;
    const demo = manifest.demoWallet.address;

    const fees = await solgate.fee.getFees({});
    expect(fees.estimate?.baseFee?.lamportsPerSignature).toBe(5000n);
    expect(typeof fees.estimate?.priority?.recommended).toBe("bigint");

    const { collection } = await solgate.collection.getCollection({ address: seeded.mint });
    expect(collection?.name).toBe(seeded.name);
    const members = await chain("getAssetsByGroup", [
      {
        groupKey: "collection",
        groupValue: seeded.mint,
        page: 1,
        limit: 1000,
        sortBy: { sortBy: "id", sortDirection: "asc" },
      },
    ]);
    const page = await solgate.collection.listCollectionNfts({ address: seeded.mint, limit: 100 });
    expect(page.items.map((nft) => nft.id)).toEqual(members.items.map((a: any) => a.id));

    const balance = await chain("getBalance", [demo, { commitment: "confirmed" }]);
    const { account } = await solgate.account.getAccount({ address: demo });
    expect(account?.lamports).toBe(BigInt(balance.value));

    const owned = await chain("getAssetsByOwner", [{ ownerAddress: demo, page: 1, limit: 1000 }]);
    const nfts = await solgate.wallet.listWalletNfts({ owner: demo, limit: 100 });
    expect(nfts.items.map((n) => n.id).sort()).toEqual(owned.items.map((a: any) => a.id).sort());

    const accounts = await chain("getProgramAccounts", [
      TOKEN_PROGRAM,
      { encoding: "base64", filters: [{ dataSize: 165 }, { memcmp: { offset: 0, bytes: gate.mint } }] },
    ]);
    const onChain = accounts.map((a: any) => a.pubkey).sort();
    const listed = await solgate.program.listProgramAccounts({
      programId: TOKEN_PROGRAM,
      size: 165n,
      match: [`0:${gate.mint}`],
      limit: 500,
    });
    expect(listed.items.map((a) => a.address).sort()).toEqual(onChain);
    // The webhook service is there too: this key registered none.
    expect((await solgate.webhook.listWebhooks({})).webhooks).toEqual([]);
    const holders = await solgate.token.listTokenHolders({ mint: gate.mint, limit: 500, includeZero: true });
    expect(holders.items.map((h) => h.tokenAccount).sort()).toEqual(onChain);
  });

  it("prepares, sends and watches a signed transfer to finalized", async () => {
    const solgate = client();
    const payer = await createKeyPairSignerFromBytes(gw.demoWalletSecret);
    // A recipient of our own per protocol, so each run sends a different transaction.
    const to = (await generateKeyPairSigner()).address;
    const draft = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(payer, m),
      (m) =>
        setTransactionMessageLifetimeUsingBlockhash(
          { blockhash: "11111111111111111111111111111111" as Blockhash, lastValidBlockHeight: 0n },
          m,
        ),
      (m) =>
        appendTransactionMessageInstruction(
          getTransferSolInstruction({ source: payer, destination: to, amount: 1_000_000n }),
          m,
        ),
    );
    const wire = getTransactionEncoder().encode(compileTransaction(draft)) as Uint8Array;

    const { estimate } = await solgate.fee.estimateFees({ transaction: wire });
    expect(estimate?.writableAccounts).toEqual(expect.arrayContaining([payer.address, to]));
    const prepared = await solgate.transaction.prepareTransaction({
      transaction: wire,
      // An exact price (a level's price can move between two calls): the oneof's 64-bit arm on every protocol.
      priorityFee: { choice: { case: "microLamports", value: 4321n } },
    });
    expect(prepared.computeUnitPrice).toBe(4321n);
    expect(prepared.computeUnitLimit).toBeGreaterThan(150);

    const signed = await signTransaction([payer.keyPair], getTransactionDecoder().decode(prepared.transaction));
    const signature = getSignatureFromTransaction(signed);
    const sent = await solgate.transaction.sendTransaction({
      transaction: getTransactionEncoder().encode(signed) as Uint8Array,
      confirm: false,
    });
    expect(sent.result?.signature).toBe(signature);
    expect(sent.result?.status).toBe(TransactionStatus.SUBMITTED);

    const seen: TransactionStatus[] = [];
    for await (const { event } of solgate.transaction.watchStatus({ signature })) {
      if (event.case === "record" && seen.at(-1) !== event.value.status) seen.push(event.value.status);
    }
    expect(seen.at(-1)).toBe(TransactionStatus.FINALIZED);
    const onChain = await chain("getSignatureStatuses", [[signature], { searchTransactionHistory: true }]);
    expect(onChain.value[0]).toMatchObject({ confirmationStatus: "finalized", err: null });
    const landed = await chain("getTransaction", [
      signature,
      { commitment: "finalized", maxSupportedTransactionVersion: 0 },
    ]);
    expect(BigInt(landed.meta.fee)).toBe(prepared.expectedFee?.lamports);
    const balance = await chain("getBalance", [to, { commitment: "finalized" }]);
    expect(balance.value).toBe(1_000_000);
  });

  it("fails without the key (UNAUTHENTICATED) and on a bad address (INVALID_ADDRESS), with the reason readable", async () => {
    const keyless = clients[name]();
    const denied = await keyless.fee.getFees({}).catch((e: unknown) => e);
    expect(ConnectError.from(denied).code).toBe(Code.Unauthenticated);
    expect(errorReason(denied)).toBe("UNAUTHENTICATED");
    const invalid = await client()
      .collection.getCollection({ address: "not-an-address" })
      .catch((e: unknown) => e);
    expect(ConnectError.from(invalid).code).toBe(Code.InvalidArgument);
    expect(errorReason(invalid)).toBe("INVALID_ADDRESS");
  });
});
