/**
 * The emulated Token Metadata and Bubblegum programs on a real chain (LiteSVM in-process, blocks produced by
 * hand), driven by real signed transactions: what each instruction writes (the Metadata layout, the sized
 * collection's count, the Merkle tree account and its root), what each refuses (a verified collection at
 * creation, a signer that is not the collection's authority, a stale proof), and the collection traffic's
 * determinism from its seed.
 */
import bs58 from "bs58";
import { describe, expect, it } from "vitest";
import { createAccountIndex } from "../../src/accounts/index.ts";
import { createChain, type Chain } from "../../src/chain/chain.ts";
import { DEFAULT_LOCALNET_CONFIG } from "../../src/config.ts";
import { standInProgramElf } from "../../src/programs/stand-in-program.ts";
import { createMerkleTree, keccak } from "../../src/programs/merkle-tree.ts";
import { metadataPda } from "../../src/programs/token-metadata-program.ts";
import {
  createAccount,
  createAssociatedTokenIdempotent,
  createMasterEditionV3,
  compressedTransfer,
  createMetadataAccountV3,
  initializeMint2,
  MINT_SIZE,
  mintTo,
  mintToCollectionV1,
  verifySizedCollectionItem,
} from "../../src/traffic/collection-instructions.ts";
import { staticAccountKeys } from "../../src/wire/account-keys.ts";
import {
  createCollectionTraffic,
  DEFAULT_COLLECTION_TRAFFIC,
  planCollectionTraffic,
  TREE_BUFFER,
  TREE_CANOPY,
  TREE_DEPTH,
  type CollectionTrafficPlan,
} from "../../src/traffic/collection-traffic.ts";
import { buildSignedTransaction } from "../../src/traffic/signed-transaction.ts";
import { decodeTransaction } from "../../src/wire/decode-transaction.ts";
import { nftAccounts } from "../../src/world/nft-accounts.ts";
import { associatedTokenAddress, TOKEN_PROGRAM } from "../../src/world/program-ids.ts";
import { deriveKey, deriveKeypair } from "../../src/world/seeded-random.ts";
import { decodeMetadata, TokenStandard } from "../../src/world/token-metadata.ts";
import { createMarketplace } from "../../src/market/marketplace.ts";

const SEED = "solgate";

/** A chain holding the world's collection NFT (sized, 100 members) and the collection traffic's accounts. */
async function collectionChain(seed = SEED): Promise<{ chain: Chain; plan: CollectionTrafficPlan }> {
  const chain = await createChain({ ...DEFAULT_LOCALNET_CONFIG, slotMs: 1_000_000 });
  const index = createAccountIndex(chain.svm);
  index.seedAccounts(
    nftAccounts({
      mint: deriveKey(SEED, "collection/mint"),
      owner: deriveKey(SEED, "collection/holder"),
      updateAuthority: bs58.encode(deriveKey(SEED, "collection/update-authority")),
      name: "Solgate Sentinels",
      symbol: "SNTL",
      uri: "https://assets.solgate.localnet/sentinels/collection.json",
      sellerFeeBasisPoints: 0,
      creators: [],
      tokenStandard: TokenStandard.NonFungible,
      collection: null,
      collectionDetails: { __kind: "V1", size: 100n },
    }) as never,
  );
  const plan = planCollectionTraffic({ ...DEFAULT_COLLECTION_TRAFFIC, worldSeed: SEED, seed }, (n) =>
    chain.native.minimumBalanceForRentExemption(BigInt(n)),
  );
  index.seedAccounts(plan.accounts as never);
  chain.programs.bubblegum.addTree(bs58.encode(plan.tree), TREE_DEPTH, TREE_BUFFER, TREE_CANOPY);
  return { chain, plan };
}

function land(chain: Chain, wire: Uint8Array) {
  chain.submit(decodeTransaction(wire));
  const block = chain.produceBlock()!;
  const record = block.transactions.find((t) => t.signature === bs58.encode(wire.subarray(1, 65)));
  if (record === undefined) throw new Error("the transaction did not land");
  return record;
}

function collectionSize(chain: Chain): bigint {
  const account = chain.executor.readAccount(bs58.encode(metadataPda(deriveKey(SEED, "collection/mint"))[0]))!;
  const details = decodeMetadata(account.data).collectionDetails;
  return details?.__kind === "V1" ? details.size : -1n;
}

/** A classic mint naming the collection, signed by `signer`, verified in the same transaction when `verify`. */
function mintNaming(
  chain: Chain,
  plan: CollectionTrafficPlan,
  signerLabel: "keeper" | "spoofer",
  verify: boolean,
  n: number,
) {
  const signer = signerLabel === "keeper" ? plan.keeper : plan.spoofer;
  const mint = deriveKeypair("test", "mint", n);
  const owner = plan.holders[0]!.publicKey;
  const instructions = [
    createAccount(signer.publicKey, mint.publicKey, 1_461_600n, MINT_SIZE, bs58.decode(TOKEN_PROGRAM)),
    initializeMint2(mint.publicKey, signer.publicKey),
    createAssociatedTokenIdempotent(signer.publicKey, owner, mint.publicKey),
    mintTo(mint.publicKey, associatedTokenAddress(owner, mint.publicKey), signer.publicKey),
    createMetadataAccountV3(mint.publicKey, signer.publicKey, signer.publicKey, {
      name: `Test #${n}`,
      symbol: "SNTL",
      uri: "https://example.localnet/t.json",
      sellerFeeBasisPoints: 500,
      creators: [{ address: signer.publicKey, verified: true, share: 100 }],
      collection: plan.collectionMint,
    }),
    createMasterEditionV3(mint.publicKey, signer.publicKey, signer.publicKey),
  ];
  if (verify)
    instructions.push(
      verifySizedCollectionItem(
        mint.publicKey,
        signer.publicKey,
        {
          mint: plan.collectionMint,
          authority: signer.publicKey,
          delegated: signerLabel === "keeper",
        },
        true,
      ),
    );
  return {
    mint,
    record: land(
      chain,
      buildSignedTransaction(
        signer,
        [mint],
        instructions,
        bs58.decode(chain.block(chain.slotAt("processed"))!.blockhash),
      ),
    ),
  };
}

describe("the stand-in program", () => {
  it("is an SBF ELF LiteSVM loads: Token Metadata's address holds an executable program", async () => {
    const elf = standInProgramElf();
    expect(Buffer.from(elf.subarray(0, 4)).toString("latin1")).toBe("\x7fELF");
    const { chain } = await collectionChain();
    const program = chain.executor.readAccount("metaqbxxUerdq28cj1RbAWkYQm3ybzjb6a8bt518x1s")!;
    expect(program.executable).toBe(true);
  });
});

describe("emulated Token Metadata", () => {
  it("creates an item naming the collection unverified, then verifies it with the delegate's record: the size moves", async () => {
    const { chain, plan } = await collectionChain();
    const { mint, record } = mintNaming(chain, plan, "keeper", true, 1);
    expect(record.outcome.err).toBeNull();
    const metadata = decodeMetadata(chain.executor.readAccount(bs58.encode(metadataPda(mint.publicKey)[0]))!.data);
    expect(metadata.collection).toEqual({ verified: true, key: bs58.encode(plan.collectionMint) });
    expect(metadata.tokenStandard).toBe(TokenStandard.NonFungible);
    expect(metadata.updateAuthority).toBe(plan.keeper.address);
    expect(collectionSize(chain)).toBe(101n);
    // Token Metadata's calls into System and SPL Token are recorded as inner instructions, and its log lines.
    expect(record.outcome.innerInstructions.length).toBeGreaterThan(0);
    expect(record.outcome.logs).toContain("Program log: IX: Create Metadata Accounts v3");
  });

  it("refuses a verify signed by anyone but the collection's authority: the whole transaction fails, its fee charged", async () => {
    const { chain, plan } = await collectionChain();
    const before = chain.executor.readAccount(plan.spoofer.address)!.lamports;
    const { mint, record } = mintNaming(chain, plan, "spoofer", true, 2);
    expect(record.outcome.err).toEqual({ InstructionError: [6, { Custom: expect.any(Number) }] });
    expect(record.outcome.logs.at(-1)).toMatch(/^Program metaqbx\w+ failed: custom program error: 0x/u);
    expect(chain.executor.readAccount(mint.address)).toBeNull(); // nothing of it was kept
    expect(chain.executor.readAccount(plan.spoofer.address)!.lamports).toBe(before - record.outcome.fee);
    expect(collectionSize(chain)).toBe(100n);
  });

  it("keeps a spoof that only names the collection unverified", async () => {
    const { chain, plan } = await collectionChain();
    const { mint, record } = mintNaming(chain, plan, "spoofer", false, 3);
    expect(record.outcome.err).toBeNull();
    const metadata = decodeMetadata(chain.executor.readAccount(bs58.encode(metadataPda(mint.publicKey)[0]))!.data);
    expect(metadata.collection).toEqual({ verified: false, key: bs58.encode(plan.collectionMint) });
    expect(collectionSize(chain)).toBe(100n);
  });
});

describe("emulated Bubblegum", () => {
  it("mints into the collection with its leaf event, then refuses a transfer whose proof does not give the root", async () => {
    const { chain, plan } = await collectionChain();
    // The committed tree (a transaction that lands replaces it with its changed copy).
    const tree = () => chain.programs.bubblegum.tree(bs58.encode(plan.tree))!;
    const holder = plan.holders[0]!;
    const collection = { mint: plan.collectionMint, authority: plan.keeper.publicKey, delegated: true };
    const metadata = {
      name: "Test cNFT",
      symbol: "SNTL",
      uri: "https://example.localnet/c.json",
      sellerFeeBasisPoints: 500,
      primarySaleHappened: false,
      isMutable: true,
      editionNonce: null,
      tokenStandard: 0,
      collection: { verified: false, key: bs58.encode(plan.collectionMint) },
      uses: null,
      tokenProgramVersion: 0,
      creators: [{ address: plan.keeper.address, verified: false, share: 100 }],
    };
    const hash = () => bs58.decode(chain.block(chain.slotAt("processed"))!.blockhash);
    const mint = (n: number) =>
      land(
        chain,
        buildSignedTransaction(
          plan.keeper,
          [],
          [
            mintToCollectionV1(plan.tree, holder.publicKey, plan.keeper.publicKey, plan.keeper.publicKey, collection, {
              ...metadata,
              name: `Test cNFT ${n}`,
            }),
          ],
          hash(),
        ),
      );
    const first = mint(1);
    expect(first.outcome.err).toBeNull();
    expect(collectionSize(chain)).toBe(101n);
    // Noop carries the leaf (ApplicationData V1, LeafSchemaEvent V1) and the change log (ChangeLog V1).
    const noop = first.keys.keys.indexOf("noopb9bkMVfRPU8AsbpTUg8AWkHHKwYxL8jqsCR3MsN");
    const calls = first.outcome.innerInstructions[0]!.instructions.filter((ix) => ix.programIdIndex === noop);
    expect(calls.map((ix) => [ix.data[0], ix.data[1]])).toEqual([
      [1, 0],
      [0, 0],
    ]);
    expect(bs58.encode(calls[0]!.data.subarray(41, 73))).toBe(holder.address);
    const leaf = chain.programs.bubblegum.leaf(bs58.encode(calls[0]!.data.subarray(9, 41)))!;
    mint(2);
    expect(tree().appended).toBe(2);
    const transfer = (proof: Uint8Array[]) =>
      land(
        chain,
        buildSignedTransaction(
          holder,
          [],
          [
            compressedTransfer(plan.tree, holder.publicKey, plan.holders[1]!.publicKey, {
              root: tree().root(),
              dataHash: leaf.dataHash,
              creatorHash: leaf.creatorHash,
              nonce: 0n,
              index: 0,
              proof,
            }),
          ],
          hash(),
        ),
      );
    const proof = tree()
      .proof(0)
      .slice(0, TREE_DEPTH - TREE_CANOPY);
    const wrong = transfer([proof[0]!, deriveKey("test", "not-a-node"), proof[2]!]);
    expect(wrong.outcome.err).toEqual({ InstructionError: [0, { Custom: 6100 }] });
    expect(chain.programs.bubblegum.leaf(leaf.id)!.owner).toBe(holder.address);
    const right = transfer(proof);
    expect(right.outcome.err).toBeNull();
    expect(chain.programs.bubblegum.leaf(leaf.id)!.owner).toBe(plan.holders[1]!.address);
  });

  it("simulates without keeping anything: neither the accounts nor the tree it keeps beside them", async () => {
    const { chain, plan } = await collectionChain();
    const tree = chain.programs.bubblegum.tree(bs58.encode(plan.tree))!;
    const ix = mintToCollectionV1(
      plan.tree,
      plan.holders[0]!.publicKey,
      plan.keeper.publicKey,
      plan.keeper.publicKey,
      { mint: plan.collectionMint, authority: plan.keeper.publicKey, delegated: true },
      {
        name: "Simulated",
        symbol: "SNTL",
        uri: "https://example.localnet/s.json",
        sellerFeeBasisPoints: 0,
        primarySaleHappened: false,
        isMutable: true,
        editionNonce: null,
        tokenStandard: 0,
        collection: { verified: false, key: bs58.encode(plan.collectionMint) },
        uses: null,
        tokenProgramVersion: 0,
        creators: [],
      },
    );
    const tx = decodeTransaction(
      buildSignedTransaction(plan.keeper, [], [ix], bs58.decode(chain.block(chain.slotAt("processed"))!.blockhash)),
    );
    const outcome = chain.executor.simulate(tx, staticAccountKeys(tx.message), true);
    expect(outcome.err).toBeNull();
    expect(outcome.logs).toContain("Program log: Instruction: MintToCollectionV1");
    expect(collectionSize(chain)).toBe(100n);
    expect(chain.programs.bubblegum.tree(bs58.encode(plan.tree))).toBe(tree);
    expect(tree.appended).toBe(0);
  });
});

describe("the Merkle tree", () => {
  it("hashes as SPL Account Compression does: an empty root of depth d is keccak of the empty root below, twice", () => {
    const tree = createMerkleTree(3, 8);
    let empty: Uint8Array = new Uint8Array(32);
    for (let i = 0; i < 3; i++) empty = keccak(empty, empty);
    expect(Buffer.from(tree.root()).equals(Buffer.from(empty))).toBe(true);
    const leaf = keccak(Uint8Array.of(1));
    tree.append(leaf);
    expect(tree.verify(leaf, 0, tree.proof(0))).toBe(true);
    expect(tree.verify(leaf, 1, tree.proof(0))).toBe(false);
  });
});

describe("the collection traffic", () => {
  async function run(seed: string, slots: number) {
    const { chain, plan } = await collectionChain(seed);
    const traffic = createCollectionTraffic(
      plan,
      { ...DEFAULT_COLLECTION_TRAFFIC, worldSeed: SEED, seed, opsPerSlot: 1 },
      chain.programs.bubblegum,
    );
    const signatures: string[] = [];
    let tip = chain.produceBlock()!;
    for (let i = 0; i < slots; i++) {
      for (const wire of traffic.next(tip.blockhash)) chain.submit(decodeTransaction(wire));
      tip = chain.produceBlock()!;
      traffic.landed(tip.transactions.map((t) => ({ signature: t.signature, failed: t.outcome.err !== null })));
      for (const t of tip.transactions) signatures.push(`${t.signature}:${t.outcome.err === null}`);
    }
    return { signatures, stats: traffic.stats, chain };
  }

  it("is the same from the same seed (given the same blockhashes: the operations and whether each landed)", async () => {
    const a = await run(SEED, 40);
    const b = await run(SEED, 40);
    // Blockhashes differ per chain (clock time), so compare what was done, not the signatures.
    expect(b.stats).toEqual(a.stats);
    const c = await run("another-seed", 40);
    expect(c.stats).not.toEqual(a.stats);
    expect(Object.keys(a.stats.landed).length).toBeGreaterThanOrEqual(6);
  });
});

describe("the marketplace", () => {
  it("moves its floor as listings come and go, the same from the same seed, and drops what left the collection", () => {
    const members = Array.from({ length: 50 }, (_, i) => ({ id: `asset${i}` }));
    const gone = new Set<string>();
    const make = () =>
      createMarketplace({
        seed: SEED,
        collections: [{ symbol: "s", mint: "m" }],
        members: () => members.filter((m) => !gone.has(m.id)),
        isMember: (_, id) => !gone.has(id),
        changesPerSlot: 1,
      });
    const a = make();
    const floors = new Set<number | undefined>();
    const seen: unknown[] = [];
    for (let i = 0; i < 60; i++) {
      a.step();
      const stats = a.stats("s")!;
      floors.add(stats.floorPrice);
      seen.push(stats.floorPrice, stats.listedCount);
    }
    expect(floors.size).toBeGreaterThan(3);
    const b = make();
    const again: unknown[] = [];
    for (let i = 0; i < 60; i++) {
      b.step();
      const stats = b.stats("s")!;
      again.push(stats.floorPrice, stats.listedCount);
    }
    expect(again).toEqual(seen);
    for (const m of members) gone.add(m.id);
    a.step();
    expect(a.stats("s")).toMatchObject({ listedCount: 0 });
    expect(a.stats("s")!.floorPrice).toBeUndefined();
    expect(a.routes()["/v2/collections/s/stats"]?.get).toBeDefined();
  });
});
