/**
 * The account data whose `base64+zstd` frames agave 4.4.0's `encode_ui_account` produced for
 * `expected.json` (`zstd`), rebuilt from a seed so the file holds only the frames: sizes from empty
 * to past zstd's 128 KiB block and 2 MiB window, some with a data slice.
 */
import { createPrng, randomInt } from "../../src/prng.ts";

export interface ZstdInput {
  readonly name: string;
  readonly size: number;
  readonly slice?: { offset: number; length: number };
  /** All zeros: what a System createAccount of `size` bytes holds. */
  readonly zeros?: true;
}

export const ZSTD_INPUTS: readonly ZstdInput[] = [
  { name: "empty", size: 0 },
  { name: "one byte", size: 1 },
  { name: "a mint's 82 bytes", size: 82 },
  { name: "a token account's 165 bytes", size: 165 },
  { name: "3,762 bytes (a vote account)", size: 3762 },
  { name: "100 KB", size: 100_000 },
  { name: "300 KB, past one 128 KiB block", size: 300_000 },
  { name: "2.5 MB, past the 2 MiB window", size: 2_500_000 },
  { name: "a slice of 3,762 bytes", size: 3762, slice: { offset: 100, length: 1000 } },
  { name: "a slice past the end", size: 165, slice: { offset: 500, length: 10 } },
  { name: "200 zero bytes (a new account)", size: 200, zeros: true },
];

/** The input's bytes: runs and repeats drawn from a seeded PRNG, so frames are small but not trivial. */
export function zstdInputData(input: ZstdInput): Uint8Array {
  const data = new Uint8Array(input.size);
  if (input.zeros) return data;
  const random = createPrng(input.size + 7);
  let i = 0;
  while (i < data.length) {
    const kind = randomInt(random, 3);
    const run = 1 + randomInt(random, 64);
    if (kind === 0) {
      data.fill(randomInt(random, 256), i, i + run);
    } else if (kind === 1 && i > 300) {
      const from = i - 1 - randomInt(random, 300);
      for (let k = 0; k < run && i + k < data.length; k++) data[i + k] = data[from + k]!;
    } else {
      for (let k = 0; k < run && i + k < data.length; k++) data[i + k] = randomInt(random, 256);
    }
    i += run;
  }
  return data;
}
