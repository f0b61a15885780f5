/**
 * A SOL transfer through Solgate with @solgate/client: sign with a keypair file, estimate the fee,
 * prepare (compute budget, priority fee, fresh blockhash), sign, send without waiting, watch it to
 * `finalized`, then list a page of a collection. Then the same transfer as a fee ladder: create a durable
 * nonce account, PrepareLadder (the same transfer at rising prices, all on that nonce, so at most one can
 * land), sign every rung, SendLadder, and watch the climb to its end. Node 22.18+ runs this file as it is
 * (`npm start`).
 *
 *   SOLGATE_URL        the gateway, e.g. http://127.0.0.1:8080
 *   SOLGATE_API_KEY    an API key (`npm start` in the Solgate repository prints one)
 *   SOLGATE_KEYPAIR    a solana-keygen keypair file (the localnet's demo wallet: `npm start` prints its path)
 *   SOLGATE_COLLECTION a collection address (default: the localnet's seeded collection)
 *   SOLGATE_TO         who receives 0.001 SOL (default: a fixed address)
 */
import { readFileSync } from "node:fs";
import { createSolgateClient, errorReason, LadderStatus, PriorityLevel, TransactionStatus } from "@solgate/client";
import {
  address,
  appendTransactionMessageInstruction,
  type Blockhash,
  compileTransaction,
  createKeyPairSignerFromBytes,
  createTransactionMessage,
  generateKeyPairSigner,
  type KeyPairSigner,
  getSignatureFromTransaction,
  getTransactionDecoder,
  getTransactionEncoder,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransaction,
} from "@solana/kit";
import {
  getCreateAccountInstruction,
  getInitializeNonceAccountInstruction,
  getNonceSize,
  getTransferSolInstruction,
  SYSTEM_PROGRAM_ADDRESS,
} from "@solana-program/system";

const env = (name: string, fallback?: string): string => {
  const value = process.env[name] ?? fallback;
  if (value === undefined) throw new Error(`set ${name}`);
  return value;
};

// The client: all seven services, the API key sent as `Authorization: Bearer` (protocol: grpc, grpc-web or connect).
const solgate = createSolgateClient({ baseUrl: env("SOLGATE_URL"), apiKey: env("SOLGATE_API_KEY"), protocol: "grpc" });

async function main(): Promise<void> {
  const payer = await createKeyPairSignerFromBytes(
    new Uint8Array(JSON.parse(readFileSync(env("SOLGATE_KEYPAIR"), "utf8"))),
  );
  const to = address(env("SOLGATE_TO", "EphAJpvNtGG6ECKwjTW814jasV2kUvH9Aj8XmQGmd1FE"));

  // An unsigned draft; its blockhash is a placeholder that PrepareTransaction replaces.
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
  const draftBytes = getTransactionEncoder().encode(compileTransaction(draft)) as Uint8Array;
  console.log(`draft: 0.001 SOL from ${payer.address} to ${to}`);

  const { estimate } = await solgate.fee.estimateFees({ transaction: draftBytes });
  console.log(
    `fees: recommended ${estimate?.priority?.recommended} micro-lamports/CU, base ${estimate?.baseFee?.lamports} lamports`,
  );

  const prepared = await solgate.transaction.prepareTransaction({
    transaction: draftBytes,
    priorityFee: { choice: { case: "level", value: PriorityLevel.AUTO } },
  });
  console.log(
    `prepared: ${prepared.computeUnitLimit} CU at ${prepared.computeUnitPrice} micro-lamports/CU, fee ${prepared.expectedFee?.lamports} lamports`,
  );

  const signed = await signTransaction([payer.keyPair], getTransactionDecoder().decode(prepared.transaction));
  const signature = getSignatureFromTransaction(signed);
  const started = performance.now();
  const { result } = await solgate.transaction.sendTransaction({
    transaction: getTransactionEncoder().encode(signed) as Uint8Array,
    confirm: false,
  });
  console.log(`sent: ${signature} ${TransactionStatus[result?.status ?? 0]}`);

  let last = TransactionStatus.UNSPECIFIED;
  for await (const { event } of solgate.transaction.watchStatus({ signature })) {
    if (event.case !== "record" || event.value.status === last) continue;
    last = event.value.status;
    console.log(
      `status: ${TransactionStatus[last]}${event.value.slot === undefined ? "" : ` at slot ${event.value.slot}`}`,
    );
    if (last !== TransactionStatus.SUBMITTED && last !== TransactionStatus.CONFIRMED) break;
  }
  if (last !== TransactionStatus.FINALIZED) throw new Error(`the transfer ended ${TransactionStatus[last]}`);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);

  const collection = env("SOLGATE_COLLECTION", "8HV7NUeYyk2B4P5VY8qjptse9VaZ3J8qRq6W3NVB5NSJ");
  const page = await solgate.collection.listCollectionNfts({ address: collection, limit: 5 });
  console.log(`collection: ${page.items.map((nft) => nft.name).join(", ")}; next cursor ${page.nextCursor ?? "none"}`);
  console.log(`done: finalized ${signature} in ${seconds} s, ${page.items.length} collection items`);

  await ladder(payer, to);
}

/** The same transfer as a fee ladder on a new durable nonce account. */
async function ladder(payer: KeyPairSigner, to: ReturnType<typeof address>): Promise<void> {
  // A nonce account whose authority is the payer (so the payer's signature on each rung also advances it).
  const nonce = await generateKeyPairSigner();
  const space = BigInt(getNonceSize());
  const createDraft = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(payer, m),
    (m) =>
      setTransactionMessageLifetimeUsingBlockhash(
        { blockhash: "11111111111111111111111111111111" as Blockhash, lastValidBlockHeight: 0n },
        m,
      ),
    (m) =>
      appendTransactionMessageInstruction(
        getCreateAccountInstruction({
          payer,
          newAccount: nonce,
          lamports: 1_447_680n, // rent-exempt minimum of the nonce account's 80 bytes
          space,
          programAddress: SYSTEM_PROGRAM_ADDRESS,
        }),
        m,
      ),
    (m) =>
      appendTransactionMessageInstruction(
        getInitializeNonceAccountInstruction({ nonceAccount: nonce.address, nonceAuthority: payer.address }),
        m,
      ),
  );
  const preparedCreate = await solgate.transaction.prepareTransaction({
    transaction: getTransactionEncoder().encode(compileTransaction(createDraft)) as Uint8Array,
  });
  const create = await signTransaction(
    [payer.keyPair, nonce.keyPair],
    getTransactionDecoder().decode(preparedCreate.transaction),
  );
  // Sent and confirmed (the default): the ladder needs the nonce account on chain.
  await solgate.transaction.sendTransaction({ transaction: getTransactionEncoder().encode(create) as Uint8Array });
  console.log(`nonce account: ${nonce.address}`);

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
  const plan = await solgate.transaction.prepareLadder({
    transaction: getTransactionEncoder().encode(compileTransaction(draft)) as Uint8Array,
    nonceAccount: nonce.address,
    rungs: 3,
    deadlineSlots: 20,
  });
  for (const [i, rung] of plan.rungs.entries())
    console.log(
      `rung ${i}: ${rung.price} micro-lamports/CU, odds ${rung.odds.toFixed(2)}, sent at slot ${rung.sendAtSlot}`,
    );
  // Every rung signed now: Solgate submits the cheapest and climbs only while the market refuses it.
  const signed = await Promise.all(
    plan.rungs.map(
      async (rung) =>
        getTransactionEncoder().encode(
          await signTransaction([payer.keyPair], getTransactionDecoder().decode(rung.transaction)),
        ) as Uint8Array,
    ),
  );
  const { ladder: taken } = await solgate.transaction.sendLadder({ transactions: signed });
  const id = taken!.id;
  console.log(`ladder sent: ${id}`);

  let last = LadderStatus.UNSPECIFIED;
  let record = taken!;
  for await (const { event } of solgate.transaction.watchLadder({ id })) {
    if (event.case !== "ladder" || event.value.status === last) continue;
    record = event.value;
    last = record.status;
    console.log(`ladder status: ${LadderStatus[last]}`);
  }
  if (last !== LadderStatus.FINALIZED) throw new Error(`the ladder ended ${LadderStatus[last]}`);
  console.log(
    `ladder: finalized rung ${record.landedRung} ${record.signature} at slot ${record.slot}, ${record.priceLanded} micro-lamports/CU, fee ${record.feePaidLamports} lamports, ${record.slotsToLand} slots after the first submission`,
  );
}

main().catch((error: unknown) => {
  console.error(`failed: ${errorReason(error) ?? ""} ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
