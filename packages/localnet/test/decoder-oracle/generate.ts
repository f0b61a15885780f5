/**
 * Regenerates `expected.json`: accounts (the localnet's own vote, stake, config and sysvar accounts
 * as a running chain holds them, plus crafted variants of each layout) and what agave 4.4.0's
 * `solana-account-decoder` makes of them, through the Rust program beside this file; also agave
 * 4.4.0's feature-set identifier and the BLS key solana-test-validator 4.4.0 derives for the
 * localnet's default vote keypair. The crates' dependency tree (~250 crates) takes longer to build
 * than CI allows, so the answers are committed and this script is run by hand after a change of
 * inputs or of the imitated agave version:
 *
 *   npx node packages/localnet/test/decoder-oracle/generate.ts
 *
 * The 4.4.0 crates declare rust-version 1.98.1; they build with rustc 1.95 when cargo is told to
 * ignore it (`--ignore-rust-version`, CARGO_RESOLVER_INCOMPATIBLE_RUST_VERSIONS=allow), as here.
 *
 * Outputs larger than 16 kB (the slot history's million-character bit string) are kept as a
 * SHA-256 of their key-sorted JSON.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import bs58 from "bs58";
import { startLocalnet } from "../../src/launcher.ts";
import { parseJson, stringifyJson } from "../../src/rpc/json.ts";
import { ZSTD_INPUTS, zstdInputData } from "./zstd-inputs.ts";

const HERE = fileURLToPath(new URL(".", import.meta.url));
const VOTE = "Vote111111111111111111111111111111111111111";
const STAKE = "Stake11111111111111111111111111111111111111";
const CONFIG = "Config1111111111111111111111111111111111111";
const SYSVAR = "Sysvar1111111111111111111111111111111111111";
const LOADER_V3 = "BPFLoaderUpgradeab1e11111111111111111111111";
const TOKEN_2022 = "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb";
const SYSVARS = [
  "SysvarC1ock11111111111111111111111111111111",
  "SysvarEpochSchedu1e111111111111111111111111",
  "SysvarRecentB1ockHashes11111111111111111111",
  "SysvarRent111111111111111111111111111111111",
  "SysvarS1otHashes111111111111111111111111111",
  "SysvarS1otHistory11111111111111111111111111",
  "SysvarStakeHistory1111111111111111111111111",
  "SysvarLastRestartS1ot1111111111111111111111",
  "SysvarEpochRewards1111111111111111111111111",
];

interface Case {
  name: string;
  pubkey: string;
  owner: string;
  data: string;
}

/** The ed25519 seed of the localnet's vote account when no ledger gives one (src/cluster/cluster.ts). */
const DEFAULT_VOTE_SEED = createHash("sha256").update("solgate-localnet:validator-vote-account").digest();

const key = (seed: number) => bs58.encode(new Uint8Array(32).fill(seed));
const u64 = (v: bigint) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(v);
  return b;
};
const i64 = (v: bigint) => {
  const b = Buffer.alloc(8);
  b.writeBigInt64LE(v);
  return b;
};
const u32 = (v: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(v);
  return b;
};
const f64 = (v: number) => {
  const b = Buffer.alloc(8);
  b.writeDoubleLE(v);
  return b;
};
const pk = (seed: number) => Buffer.from(new Uint8Array(32).fill(seed));

/** A vote state 1.14.11 (lockouts without latency), with one prior voter set. */
function voteV1_14_11(): Buffer {
  const prior = Buffer.alloc(32 * 48);
  pk(9).copy(prior, 48 * 3);
  u64(4n).copy(prior, 48 * 3 + 32);
  u64(5n).copy(prior, 48 * 3 + 40);
  const body = Buffer.concat([
    u32(1),
    pk(1),
    pk(2),
    Buffer.from([7]),
    u64(2n),
    u64(100n),
    u32(2),
    u64(101n),
    u32(1),
    Buffer.from([0]),
    u64(1n),
    u64(3n),
    pk(3),
    prior,
    u64(3n),
    Buffer.from([0]),
    u64(2n),
    u64(1n),
    u64(10n),
    u64(0n),
    u64(2n),
    u64(25n),
    u64(10n),
    u64(101n),
    i64(-5n),
  ]);
  return Buffer.concat([body, Buffer.alloc(3731 - body.length)]);
}

/** A v3 vote state (tag 2, lockouts with latency) with commission 7 and a bad prior-voters flag. */
function voteV3(): Buffer {
  const body = Buffer.concat([
    u32(2),
    pk(1),
    pk(2),
    Buffer.from([7]),
    u64(1n),
    Buffer.from([3]),
    u64(100n),
    u32(1),
    Buffer.from([1]),
    u64(99n),
    u64(2n),
    u64(4n),
    pk(3),
    u64(2n),
    pk(4),
    Buffer.alloc(32 * 48 + 8),
    Buffer.from([7]), // the prior voters' is_empty flag: v4's reader skips the buffer unread
    u64(1n),
    u64(2n),
    u64(30n),
    u64(10n),
    u64(100n),
    i64(1_700_000_000n),
  ]);
  return Buffer.concat([body, Buffer.alloc(3762 - body.length)]);
}

/** A v4 vote state (tag 3, SIMD-0185), with or without a BLS key; `blsTag` forces the option's tag. */
function voteV4(opts: { bls: boolean; blsTag?: number; inflationBps: number; authorizedVoterEpochs?: bigint[] }) {
  const voters = opts.authorizedVoterEpochs ?? [0n];
  const body = Buffer.concat([
    u32(3),
    pk(1),
    pk(2),
    pk(5),
    pk(6),
    Buffer.from([opts.inflationBps & 0xff, opts.inflationBps >> 8]),
    Buffer.from([0x88, 0x13]), // 5,000 bps
    u64(123_456_789n),
    opts.bls
      ? Buffer.concat([Buffer.from([opts.blsTag ?? 1]), Buffer.alloc(48, 0xab)])
      : Buffer.from([opts.blsTag ?? 0]),
    u64(2n),
    Buffer.from([1]),
    u64(200n),
    u32(2),
    Buffer.from([0]),
    u64(201n),
    u32(1),
    Buffer.from([0]),
    u64(BigInt(voters.length)),
    ...voters.map((epoch, i) => Buffer.concat([u64(epoch), pk(60 + i)])),
    u64(1n),
    u64(0n),
    u64(64n),
    u64(0n),
    u64(201n),
    i64(1_700_000_400n),
  ]);
  return Buffer.concat([body, Buffer.alloc(3762 - body.length)]);
}

/** A Token-2022 mint (82-byte base, padded to the account size, AccountType::Mint) with TLV extensions. */
function mint2022(extensions: Array<[number, Buffer]>): Buffer {
  const base = Buffer.concat([u32(1), pk(70), u64(1_000_000n), Buffer.from([6, 1]), u32(0), Buffer.alloc(32)]);
  const tlv = extensions.map(([type, value]) =>
    Buffer.concat([Buffer.from([type & 0xff, type >> 8, value.length & 0xff, value.length >> 8]), value]),
  );
  return Buffer.concat([base, Buffer.alloc(165 - base.length), Buffer.from([1]), ...tlv]);
}

/** A 0.23.5 vote state (tag 0), which agave 4.4's reader refuses. */
function voteV0_23_5(): Buffer {
  const body = Buffer.concat([u32(0), pk(1), pk(3), u64(0n), Buffer.alloc(32 * 56 + 8 + 1), pk(2), Buffer.from([5])]);
  return Buffer.concat([body, Buffer.alloc(3762 - body.length)]);
}

function stakeMeta(reserve: bigint, lockupTs: bigint, lockupEpoch: bigint, custodian: number): Buffer {
  return Buffer.concat([u64(reserve), pk(11), pk(12), i64(lockupTs), u64(lockupEpoch), pk(custodian)]);
}

/**
 * Upgradeable-loader accounts: programdata as the localnet's `LOCALNET_PROGRAMS` writes it (ELF at
 * offset 45) with and without an upgrade authority, one made final after deployment (authority
 * None, the old key's bytes left in place), buffers, a program, and malformed ones.
 */
function loaderCases(): Case[] {
  const elf = Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1]), Buffer.alloc(93, 7)]);
  const programdata = (authority: Buffer | null, filler: Buffer = Buffer.alloc(32)) =>
    Buffer.concat([
      u32(3),
      u64(1234n),
      authority === null ? Buffer.concat([Buffer.from([0]), filler]) : Buffer.concat([Buffer.from([1]), authority]),
      elf,
    ]);
  const buffer = (authority: Buffer | null) =>
    Buffer.concat([u32(1), authority === null ? Buffer.from([0]) : Buffer.concat([Buffer.from([1]), authority]), elf]);
  const cases: [string, Buffer][] = [
    ["programdata with an upgrade authority", programdata(pk(40))],
    ["programdata without an upgrade authority", programdata(null)],
    ["programdata made final (the old authority's bytes left)", programdata(null, pk(41))],
    ["programdata, metadata only", programdata(pk(40)).subarray(0, 45)],
    ["programdata truncated in its authority", programdata(pk(40)).subarray(0, 30)],
    ["programdata with a bad option tag", Buffer.concat([u32(3), u64(1n), Buffer.from([2]), pk(40)])],
    ["buffer with an authority", buffer(pk(42))],
    ["buffer without an authority", buffer(null)],
    ["program", Buffer.concat([u32(2), pk(43)])],
    ["loader uninitialized", u32(0)],
    ["loader unknown tag", Buffer.concat([u32(4), pk(43)])],
  ];
  return cases.map(([name, data], i) => ({
    name,
    pubkey: key(50 + i),
    owner: LOADER_V3,
    data: data.toString("base64"),
  }));
}

function crafted(): Case[] {
  const initialized = Buffer.concat([u32(1), stakeMeta(2_282_880n, -1n, 7n, 13), Buffer.alloc(200 - 4 - 120)]);
  const delegated = Buffer.concat([
    u32(2),
    stakeMeta(2_282_880n, 0n, 0n, 0),
    pk(14),
    u64(5_000_000_000n),
    u64(3n),
    u64(2n ** 64n - 1n),
    f64(0.25),
    u64(42n),
    Buffer.from([1]),
    Buffer.alloc(3),
  ]);
  const configKeys = (keys: Array<[number | string, boolean]>) =>
    Buffer.concat([
      Buffer.from([keys.length]),
      ...keys.map(([k, s]) =>
        Buffer.concat([typeof k === "string" ? Buffer.from(bs58.decode(k)) : pk(k), Buffer.from([s ? 1 : 0])]),
      ),
    ]);
  const infoJson = Buffer.from(
    JSON.stringify({ name: "Solgate localnet", website: "https://example.org", details: "ünïcode" }),
  );
  const validatorInfo = Buffer.concat([
    configKeys([
      ["Va1idator1nfo111111111111111111111111111111", false],
      [15, true],
    ]),
    u64(BigInt(infoJson.length)),
    infoJson,
  ]);
  const notInfo = Buffer.concat([configKeys([[16, false]]), u64(2n), Buffer.from("{}")]);
  const badJson = Buffer.concat([
    configKeys([["Va1idator1nfo111111111111111111111111111111", false]]),
    u64(3n),
    Buffer.from("{x}"),
  ]);
  const stakeHistory = Buffer.concat([
    u64(2n),
    u64(3n),
    u64(100n),
    u64(5n),
    u64(1n),
    u64(2n),
    u64(90n),
    u64(0n),
    u64(0n),
  ]);
  const fees = u64(5000n);
  return [
    { name: "vote 1.14.11 with a prior voter", pubkey: key(20), owner: VOTE, data: voteV1_14_11().toString("base64") },
    { name: "vote v3 with commission 7", pubkey: key(32), owner: VOTE, data: voteV3().toString("base64") },
    {
      name: "vote v4 with a BLS key",
      pubkey: key(33),
      owner: VOTE,
      data: voteV4({ bls: true, inflationBps: 751 }).toString("base64"),
    },
    {
      name: "vote v4 without a BLS key, commission above 255%",
      pubkey: key(34),
      owner: VOTE,
      data: voteV4({ bls: false, inflationBps: 30_000 }).toString("base64"),
    },
    {
      name: "vote v4 with a bad BLS option tag",
      pubkey: key(35),
      owner: VOTE,
      data: voteV4({ bls: false, blsTag: 2, inflationBps: 0 }).toString("base64"),
    },
    {
      name: "vote v4 with authorized voters out of order and repeated",
      pubkey: key(36),
      owner: VOTE,
      data: voteV4({ bls: true, inflationBps: 100, authorizedVoterEpochs: [5n, 3n, 5n] }).toString("base64"),
    },
    { name: "vote 0.23.5", pubkey: key(37), owner: VOTE, data: voteV0_23_5().toString("base64") },
    {
      name: "vote unknown tag",
      pubkey: key(38),
      owner: VOTE,
      data: Buffer.concat([u32(4), Buffer.alloc(3758)]).toString("base64"),
    },
    {
      name: "token-2022 mint with a permissioned-burn authority (4.4)",
      pubkey: key(39),
      owner: TOKEN_2022,
      data: mint2022([[28, pk(71)]]).toString("base64"),
    },
    {
      name: "token-2022 mint with permissioned burn and no authority",
      pubkey: key(40),
      owner: TOKEN_2022,
      data: mint2022([
        [26, Buffer.concat([pk(72), Buffer.from([1])])],
        [28, Buffer.alloc(32)],
      ]).toString("base64"),
    },
    { name: "vote uninitialized (zeros)", pubkey: key(21), owner: VOTE, data: Buffer.alloc(3762).toString("base64") },
    { name: "vote truncated", pubkey: key(22), owner: VOTE, data: voteV1_14_11().subarray(0, 100).toString("base64") },
    { name: "stake initialized with a lockup", pubkey: key(23), owner: STAKE, data: initialized.toString("base64") },
    {
      name: "stake delegated, deactivating never, flags set",
      pubkey: key(24),
      owner: STAKE,
      data: delegated.toString("base64"),
    },
    { name: "stake uninitialized", pubkey: key(25), owner: STAKE, data: Buffer.alloc(200).toString("base64") },
    {
      name: "stake rewards pool",
      pubkey: key(26),
      owner: STAKE,
      data: Buffer.concat([u32(3), Buffer.alloc(196)]).toString("base64"),
    },
    { name: "stake truncated", pubkey: key(27), owner: STAKE, data: delegated.subarray(0, 150).toString("base64") },
    {
      name: "stake unknown tag",
      pubkey: key(28),
      owner: STAKE,
      data: Buffer.concat([u32(9), Buffer.alloc(196)]).toString("base64"),
    },
    {
      name: "stake config, LiteSVM's 17-byte layout",
      pubkey: "StakeConfig11111111111111111111111111111111",
      owner: CONFIG,
      data: "AAAAAAAAAAAAAAAAAADQPww=",
    },
    { name: "validator info", pubkey: key(29), owner: CONFIG, data: validatorInfo.toString("base64") },
    { name: "config of another kind", pubkey: key(30), owner: CONFIG, data: notInfo.toString("base64") },
    { name: "validator info with bad JSON", pubkey: key(31), owner: CONFIG, data: badJson.toString("base64") },
    {
      name: "stake history with entries",
      pubkey: "SysvarStakeHistory1111111111111111111111111",
      owner: SYSVAR,
      data: stakeHistory.toString("base64"),
    },
    {
      name: "fees sysvar",
      pubkey: "SysvarFees111111111111111111111111111111111",
      owner: SYSVAR,
      data: fees.toString("base64"),
    },
  ];
}

async function live(): Promise<Case[]> {
  const net = await startLocalnet({ slotMs: 10 });
  try {
    const call = async (method: string, params: unknown[]) => {
      const res = await fetch(net.rpcUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: stringifyJson({ jsonrpc: "2.0", id: 1, method, params }),
      });
      return (parseJson(await res.text()) as { result: any }).result;
    };
    for (;;) {
      if ((await call("getSlot", [{ commitment: "processed" }])) > 70) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const vote = (await call("getVoteAccounts", [{ commitment: "processed" }])).current[0].votePubkey;
    const stake = (await call("getProgramAccounts", [STAKE, { encoding: "base64" }]))[0].pubkey;
    const cases: Case[] = [];
    for (const [name, pubkey] of [
      ["the localnet's vote account", vote],
      ["the localnet's stake account", stake],
      ["the localnet's stake config", "StakeConfig11111111111111111111111111111111"],
      ...SYSVARS.map((s) => [`the localnet's ${s}`, s]),
    ]) {
      const value = (await call("getAccountInfo", [pubkey, { encoding: "base64", commitment: "processed" }])).value;
      cases.push({ name: name!, pubkey: pubkey!, owner: value.owner, data: value.data[0] });
    }
    return cases;
  } finally {
    await net.stop();
  }
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === "object" && !("rawJSON" in (value as object))) {
    return Object.fromEntries(
      Object.keys(value as object)
        .sort()
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

/** SHA-256 of a parsed value's key-sorted JSON (how large outputs are kept). */
export function digest(value: unknown): string {
  return createHash("sha256")
    .update(stringifyJson(sortKeys(value)))
    .digest("hex");
}

/** Texts agave's base64 decoding refuses, each for another reason (or accepts, as controls). */
export const BASE64_INPUTS = [
  "!!!!",
  "abc",
  "abcde",
  "ab==",
  "a===",
  "abc=",
  "ab=c",
  "abcd=",
  "abcd\n",
  "ab c",
  "AB==",
  "ABC=",
  "A",
  "====",
  "ab==ab==",
  "abcd====",
  "a=bc",
  "Zm9v\u00e9",
  "Zm9vYg=",
  "Zm9vYmFy\t",
  "Zm9v YmFy",
  "Zm9vYmE=",
  "Zm9vYmF=",
  "Zm9vYg==",
  "Zm9vYh==",
  "QUJD-_==",
  "AAAAAAAAAAAA.AAA",
  "",
  "AQID",
];

/** Genesis hashes for compute_shred_version: the default hash, mainnet-beta's, and a spread of others. */
const SHRED_HASHES = [
  "11111111111111111111111111111111",
  "5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d",
  ...Array.from({ length: 8 }, (_, i) => bs58.encode(createHash("sha256").update(`shred ${i}`).digest())),
  bs58.encode(new Uint8Array(32).fill(0xff)),
];

async function main() {
  const cases = [...(await live()), ...crafted(), ...loaderCases()];
  execFileSync("cargo", ["build", "--release", "--quiet", "--ignore-rust-version"], {
    cwd: HERE,
    stdio: "inherit",
    env: { ...process.env, CARGO_RESOLVER_INCOMPATIBLE_RUST_VERSIONS: "allow" },
  });
  const lines = [
    ...cases.map((c) => JSON.stringify({ pubkey: c.pubkey, owner: c.owner, data: c.data })),
    ...BASE64_INPUTS.map((text) => JSON.stringify({ base64: text })),
    JSON.stringify({ featureSet: true }),
    JSON.stringify({ blsFromSeed: DEFAULT_VOTE_SEED.toString("hex") }),
    ...ZSTD_INPUTS.map((input) =>
      JSON.stringify({ zstd: Buffer.from(zstdInputData(input)).toString("base64"), ...input.slice }),
    ),
    JSON.stringify({ genesisAccounts: true }),
    JSON.stringify({ epochSchedule: null }),
    JSON.stringify({ epochSchedule: 64 }),
    ...SHRED_HASHES.map((hash) => JSON.stringify({ shredVersion: hash })),
    JSON.stringify({ featureAccounts: true }),
  ];
  const target = process.env.CARGO_TARGET_DIR ?? `${HERE}target`;
  const out = execFileSync(`${target}/release/decoder-oracle`, {
    input: lines.join("\n"),
    maxBuffer: 64 * 1024 * 1024,
  })
    .toString()
    .trim()
    .split("\n");
  const expected = cases.map((c, i) => {
    const answer = parseJson(out[i]!);
    const text = stringifyJson(answer);
    return text.length > 16_384 ? { ...c, expectedSha256: digest(answer) } : { ...c, expected: answer };
  });
  const base64 = BASE64_INPUTS.map((text, i) => ({ text, ...(parseJson(out[cases.length + i]!) as object) }));
  const at = cases.length + BASE64_INPUTS.length;
  const { featureSet } = parseJson(out[at]!) as { featureSet: number };
  const { blsPubkey } = parseJson(out[at + 1]!) as { blsPubkey: string };
  const zstd = ZSTD_INPUTS.map((input, i) => {
    const { zstd: frame } = parseJson(out[at + 2 + i]!) as { zstd: string };
    const sha256 = createHash("sha256").update(frame).digest("hex");
    return frame.length > 16_384 ? { ...input, frameSha256: sha256 } : { ...input, frame };
  });
  const genesisAccounts = parseJson(out[at + 2 + ZSTD_INPUTS.length]!);
  const epochSchedules = {
    default: parseJson(out[at + 3 + ZSTD_INPUTS.length]!),
    slotsPerEpoch64: parseJson(out[at + 4 + ZSTD_INPUTS.length]!),
  };
  const shredVersions = SHRED_HASHES.map((hash, i) => ({
    hash,
    ...(parseJson(out[at + 5 + ZSTD_INPUTS.length + i]!) as { shredVersion: number }),
  }));
  const featureAccounts = parseJson(out[at + 5 + ZSTD_INPUTS.length + SHRED_HASHES.length]!) as Record<string, unknown>;
  // The localnet writes these at genesis; the list is generated here, from agave-feature-set 4.4.0.
  const ids = Object.keys(featureAccounts).sort();
  writeFileSync(
    `${HERE}../../src/cluster/feature-ids.ts`,
    `/**\n * The features solana-test-validator 4.4.0 activates at genesis (\`FeatureSet::all_enabled()\` but\n * alpenglow), each written as a feature account. Generated by test/decoder-oracle/generate.ts from\n * agave-feature-set 4.4.0; do not edit.\n */\nexport const GENESIS_FEATURE_IDS: readonly string[] = [\n${ids.map((id) => `  "${id}",`).join("\n")}\n];\n`,
  );
  const raw = (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON;
  const body = JSON.stringify(
    {
      agave: "solana-account-decoder 4.4.0",
      featureSet,
      defaultVoteAccountBls: { seed: DEFAULT_VOTE_SEED.toString("hex"), blsPubkey },
      cases: expected,
      base64,
      zstd,
      genesisAccounts,
      epochSchedules,
      shredVersions,
      featureAccounts,
    },
    (_k, v) => (typeof v === "bigint" ? raw(v.toString()) : v),
    1,
  );
  writeFileSync(`${HERE}expected.json`, `${body}\n`);
  console.log(`${expected.length} cases written`);
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
