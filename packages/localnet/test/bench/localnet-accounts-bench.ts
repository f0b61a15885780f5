/**
 * Account-index benchmark: seeds 100,000 SPL token accounts of one mint (plus 20,000 of other mints)
 * into a real LiteSVM, then times getProgramAccounts(Token, dataSize 165 + memcmp mint) and the
 * owner variant through the method handlers, and the JSON serialisation of the result.
 * Run: npx node packages/localnet/test/bench/localnet-accounts-bench.ts [accounts=100000]
 */
import { randomBytes } from "node:crypto";
import { LiteSVM } from "litesvm";
import bs58 from "bs58";
import { createAccountIndex, createAccountMethods, toJson, type SeedAccount } from "../../src/accounts/index.ts";

const TOKEN_PROGRAM = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";
const MAIN_ACCOUNTS = Number(process.argv[2] ?? 100_000);
const OTHER_ACCOUNTS = Math.round(MAIN_ACCOUNTS / 5);
const RUNS = 5;

function mintData(decimals: number, supply: bigint): Uint8Array {
  const data = new Uint8Array(82);
  const view = new DataView(data.buffer);
  view.setBigUint64(36, supply, true);
  data[44] = decimals;
  data[45] = 1;
  return data;
}

function tokenAccountData(mint: Uint8Array, owner: Uint8Array, amount: bigint): Uint8Array {
  const data = new Uint8Array(165);
  data.set(mint, 0);
  data.set(owner, 32);
  new DataView(data.buffer).setBigUint64(64, amount, true);
  data[108] = 1; // initialized
  return data;
}

/** Wall time, and the process's CPU time, which a machine shared with other work distorts less. */
let lastCpuMs = 0;
function time<T>(run: () => T): [T, number] {
  const cpu = process.cpuUsage();
  const start = performance.now();
  const value = run();
  const wall = performance.now() - start;
  const used = process.cpuUsage(cpu);
  lastCpuMs = (used.user + used.system) / 1000;
  return [value, wall];
}

function summary(samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  return `first ${samples[0].toFixed(1)} ms, median ${sorted[Math.floor(sorted.length / 2)].toFixed(1)} ms, min ${sorted[0].toFixed(1)} ms`;
}

const svm = new LiteSVM();
const [index, indexMs] = time(() => createAccountIndex(svm));
console.log(`index over genesis accounts: ${index.size} accounts in ${indexMs.toFixed(1)} ms`);

const mainMint = randomBytes(32);
const otherMints = [randomBytes(32), randomBytes(32), randomBytes(32)];
const whale = randomBytes(32);
const pool = randomBytes(32 * (MAIN_ACCOUNTS + OTHER_ACCOUNTS) * 2);
let cursor = 0;
const nextKey = () => pool.subarray(cursor, (cursor += 32));

const seeds: SeedAccount[] = [];
for (const mint of [mainMint, ...otherMints]) {
  seeds.push({ address: mint, owner: TOKEN_PROGRAM as never, lamports: 1_461_600n, data: mintData(6, 10n ** 15n) });
}
for (let i = 0; i < MAIN_ACCOUNTS; i++) {
  const owner = i % 1000 === 0 ? whale : nextKey();
  seeds.push({
    address: nextKey(),
    owner: TOKEN_PROGRAM as never,
    lamports: 2_039_280n,
    data: tokenAccountData(mainMint, owner, BigInt(i)),
  });
}
for (let i = 0; i < OTHER_ACCOUNTS; i++) {
  const mint = otherMints[i % otherMints.length];
  const owner = i % 500 === 0 ? whale : nextKey();
  seeds.push({
    address: nextKey(),
    owner: TOKEN_PROGRAM as never,
    lamports: 2_039_280n,
    data: tokenAccountData(mint, owner, BigInt(i)),
  });
}
const [seeded, seedMs] = time(() => index.seedAccounts(seeds));
console.log(
  `seeded ${seeded} accounts (LiteSVM + index) in ${seedMs.toFixed(0)} ms wall, ${lastCpuMs.toFixed(0)} ms CPU ` +
    `(${((seedMs * 1000) / seeded).toFixed(1)} µs each)`,
);

const methods = createAccountMethods({ svm, index });
const ctx = { slotAt: () => 1n };
const mintQuery = [
  TOKEN_PROGRAM,
  { encoding: "base64", filters: [{ dataSize: 165 }, { memcmp: { offset: 0, bytes: bs58.encode(mainMint) } }] },
];
const ownerQuery = [
  TOKEN_PROGRAM,
  { encoding: "base64", filters: [{ dataSize: 165 }, { memcmp: { offset: 32, bytes: bs58.encode(whale) } }] },
];

function bench(label: string, params: unknown[]): void {
  const samples: number[] = [];
  const cpu: number[] = [];
  const serialise: number[] = [];
  let count = 0;
  for (let run = 0; run < RUNS; run++) {
    const [result, ms] = time(() => methods.getProgramAccounts(params, ctx) as unknown[]);
    samples.push(ms);
    cpu.push(lastCpuMs);
    count = result.length;
    serialise.push(time(() => toJson({ jsonrpc: "2.0", id: 1, result }))[1]);
  }
  console.log(`${label}: ${count} accounts`);
  console.log(`  method wall: ${summary(samples)}`);
  console.log(`  method CPU:  ${summary(cpu)}`);
  console.log(`  toJson wall: ${summary(serialise)}`);
}

bench("getProgramAccounts dataSize 165 + memcmp mint ", mintQuery);
bench("getProgramAccounts dataSize 165 + memcmp owner", ownerQuery);
bench("getProgramAccounts base64 slice 32+40 + mint   ", [
  TOKEN_PROGRAM,
  {
    encoding: "base64",
    dataSlice: { offset: 32, length: 40 },
    filters: [{ dataSize: 165 }, { memcmp: { offset: 0, bytes: bs58.encode(mainMint) } }],
  },
]);
bench("getProgramAccounts jsonParsed + memcmp mint   ", [
  TOKEN_PROGRAM,
  { encoding: "jsonParsed", filters: [{ dataSize: 165 }, { memcmp: { offset: 0, bytes: bs58.encode(mainMint) } }] },
]);

// What reading every match back through LiteSVM (instead of the index's copies) would cost.
const matches = index.tokenAccountsByMint(TOKEN_PROGRAM as never, mainMint);
const [, liveMs] = time(() => {
  for (const entry of matches) index.store.read(entry.key);
});
console.log(
  `re-reading the ${matches.length} matches from LiteSVM instead: ${liveMs.toFixed(0)} ms wall, ${lastCpuMs.toFixed(0)} ms CPU`,
);

// A transfer-sized update after the order is cached must not cost a re-sort.
const [, recordMs] = time(() => index.record([matches[5].address, matches[500].address]));
const [, afterMs] = time(() => methods.getProgramAccounts(mintQuery, ctx));
console.log(
  `record(2 accounts) ${recordMs.toFixed(2)} ms; next mint query ${afterMs.toFixed(1)} ms wall, ${lastCpuMs.toFixed(0)} ms CPU`,
);
