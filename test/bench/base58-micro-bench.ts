/**
 * base58OfKey against bs58 and kit's codec on 100,000 random keys: CPU time per encoder (median of 7
 * runs of the whole set), as a holder listing encodes one owner per token account.
 * Run: npx node test/bench/base58-micro-bench.ts
 */
import { randomBytes } from "node:crypto";
import bs58 from "bs58";
import { getBase58Decoder } from "@solana/kit";
import { base58OfKey } from "../../src/solana/base58-key.ts";

const N = 100_000;
const keys = Array.from({ length: N }, () => new Uint8Array(randomBytes(32)));
const kit = getBase58Decoder();

function cpuMs(encode: (key: Uint8Array) => string): number {
  const samples: number[] = [];
  for (let run = 0; run < 7; run++) {
    const start = process.cpuUsage();
    let length = 0;
    for (const key of keys) length += encode(key).length;
    const used = process.cpuUsage(start);
    if (length < N * 32) throw new Error("short output");
    samples.push((used.user + used.system) / 1000);
  }
  return samples.sort((a, b) => a - b)[3];
}

const ours = cpuMs((k) => base58OfKey(k));
const theirs = cpuMs((k) => bs58.encode(k));
const kits = cpuMs((k) => kit.decode(k));
console.log(
  `${N} keys: base58OfKey ${ours.toFixed(1)} ms, bs58.encode ${theirs.toFixed(1)} ms (${(theirs / ours).toFixed(1)}x), ` +
    `kit ${kits.toFixed(1)} ms (${(kits / ours).toFixed(1)}x)`,
);
