/**
 * Test-side chain helpers built with kit alone: real address lookup tables created through the ALT
 * program, and unsigned drafts, for tests and benchmarks that run against the localnet.
 */
import {
  AccountRole,
  address,
  appendTransactionMessageInstructions,
  compileTransaction,
  compressTransactionMessageUsingAddressLookupTables,
  createNoopSigner,
  createTransactionMessage,
  getAddressEncoder,
  getBase64EncodedWireTransaction,
  getProgramDerivedAddress,
  getTransactionEncoder,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
} from "@solana/kit";
import type { Address, Blockhash, KeyPairSigner, Rpc, SolanaRpcApi } from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";

const ALT_PROGRAM = address("AddressLookupTab1e1111111111111111111111111");
const SYSTEM_PROGRAM = address("11111111111111111111111111111111");

/**
 * Creates and extends a lookup table holding `addresses` (CreateLookupTable then ExtendLookupTable, in
 * one transaction paid by `payer`), waits until it is confirmed, and returns its address.
 */
export async function createLookupTable(
  rpc: Rpc<SolanaRpcApi>,
  payer: KeyPairSigner,
  addresses: readonly Address[],
): Promise<Address> {
  // The localnet's SlotHashes holds slot 0, so 0 is always an acceptable "recent slot"; a PDA per payer.
  const recentSlot = 0n;
  const slotBytes = new Uint8Array(8);
  new DataView(slotBytes.buffer).setBigUint64(0, recentSlot, true);
  const [table, bump] = await getProgramDerivedAddress({
    programAddress: ALT_PROGRAM,
    seeds: [getAddressEncoder().encode(payer.address), slotBytes],
  });
  const create = new Uint8Array(13);
  new DataView(create.buffer).setBigUint64(4, recentSlot, true); // tag 0 (u32), recent slot (u64), bump (u8)
  create[12] = bump;
  const extend = new Uint8Array(12 + 32 * addresses.length);
  const view = new DataView(extend.buffer);
  view.setUint32(0, 2, true); // tag 2: ExtendLookupTable, then a Vec<Pubkey> (u64 length)
  view.setBigUint64(4, BigInt(addresses.length), true);
  addresses.forEach((a, i) => extend.set(getAddressEncoder().encode(a), 12 + 32 * i));
  const accounts = [
    { address: table, role: AccountRole.WRITABLE },
    { address: payer.address, role: AccountRole.READONLY_SIGNER, signer: payer },
    { address: payer.address, role: AccountRole.WRITABLE_SIGNER, signer: payer },
    { address: SYSTEM_PROGRAM, role: AccountRole.READONLY },
  ];
  const { value: blockhash } = await rpc.getLatestBlockhash().send();
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(payer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(blockhash, m),
    (m) =>
      appendTransactionMessageInstructions(
        [
          { programAddress: ALT_PROGRAM, accounts, data: create },
          { programAddress: ALT_PROGRAM, accounts, data: extend },
        ] as never,
        m,
      ),
  );
  const signed = await signTransactionMessageWithSigners(message);
  const signature = await rpc.sendTransaction(getBase64EncodedWireTransaction(signed), { encoding: "base64" }).send();
  const deadline = Date.now() + 20_000;
  for (;;) {
    const { value } = await rpc.getSignatureStatuses([signature]).send();
    const status = value[0];
    if (status?.err)
      throw new Error(
        `lookup table creation failed: ${JSON.stringify(status.err, (_k, v) => (typeof v === "bigint" ? String(v) : v))}`,
      );
    if (status?.confirmationStatus === "confirmed" || status?.confirmationStatus === "finalized") return table;
    if (Date.now() > deadline) throw new Error("lookup table creation did not confirm");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** An unsigned v0 draft from `payer` that transfers to each of `writable`, compressed through `tables` when given. */
export function draftTransfer(
  payer: Address,
  writable: readonly Address[],
  tables?: Record<Address, Address[]>,
): Uint8Array {
  const signer = createNoopSigner(payer);
  let message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(signer, m),
    (m) =>
      setTransactionMessageLifetimeUsingBlockhash(
        { blockhash: "11111111111111111111111111111111" as Blockhash, lastValidBlockHeight: 0n },
        m,
      ),
    (m) =>
      appendTransactionMessageInstructions(
        writable.map((destination) => getTransferSolInstruction({ source: signer, destination, amount: 1n })),
        m,
      ),
  );
  if (tables) message = compressTransactionMessageUsingAddressLookupTables(message, tables) as typeof message;
  return new Uint8Array(getTransactionEncoder().encode(compileTransaction(message)));
}
