/**
 * The feature gates of agave's block limits, which `--deactivate-feature` can turn off. The localnet
 * has no feature set of its own for packing: it packs blocks by three settings (LOCALNET_BLOCK_CU_LIMIT,
 * LOCALNET_ACCOUNT_CU_LIMIT and LOCALNET_REDUCED_SLOT_MS), so deactivating one of these features sets what
 * agave 4.4 would use without it. Ids: agave-feature-set 4.4; values: runtime/src/slot_params.rs.
 *
 * agave 4.4 reads only SIMD-0286 (x 100 / 60) and the four slot-time features (SIMD-0525): the 60M and 24M
 * of SIMD-0256 and SIMD-0306 are its baseline table, so deactivating SIMD-0207, SIMD-0256 or SIMD-0306
 * is accepted (solana-test-validator accepts any known feature) and changes nothing.
 */
import bs58 from "bs58";
import { MAX_BLOCK_UNITS, raisedTo100m, SLOT_TIME_REGIMES } from "../chain/cost-model.ts";

export const BLOCK_LIMIT_ENV = {
  block: "LOCALNET_BLOCK_CU_LIMIT",
  account: "LOCALNET_ACCOUNT_CU_LIMIT",
  reducedSlotMs: "LOCALNET_REDUCED_SLOT_MS",
} as const;

type Feature = "raise50m" | "raise60m" | "raise100m" | "raiseAccount" | "slot350" | "slot300" | "slot250" | "slot200";

/** The features, by id (all active at solana-test-validator 4.4's genesis). */
export const BLOCK_LIMIT_FEATURES: Record<string, { feature: Feature; simd: string }> = {
  "5oMCU3JPaFLr8Zr4ct7yFA7jdk6Mw1RmB8K4u9ZbS42z": { feature: "raise50m", simd: "SIMD-0207" },
  "6oMCUgfY6BzZ6jwB681J6ju5Bh6CjVXbd7NeWYqiXBSu": { feature: "raise60m", simd: "SIMD-0256" },
  P1BCUMpAC7V2GRBRiJCNUgpMyWZhoqt3LKo712ePqsz: { feature: "raise100m", simd: "SIMD-0286" },
  htsptAwi2yRoZH83SKaUXykeZGtZHgxkS2QwW1pssR8: { feature: "raiseAccount", simd: "SIMD-0306" },
  iBRL5RuWhw4yqaAZu96RUULHckHTZAoe2b77qaV38JZ: { feature: "slot350", simd: "SIMD-0525 (350 ms)" },
  iBRLL3k18HST852F1Mf3Lv83waTNQmmqvKDxvYGwQFL: { feature: "slot300", simd: "SIMD-0525 (300 ms)" },
  iBRLMc81UjRa8fn8A6eE8bJTnRbgQoPTynM51akENCV: { feature: "slot250", simd: "SIMD-0525 (250 ms)" },
  iBRLjhJnkmDZgNoZRDMW11d8ZV7HvsL3vAyRjZB5npW: { feature: "slot200", simd: "SIMD-0525 (200 ms)" },
};

/** Slot-time features, shortest first: the shortest active one is the regime (SlotParamsArchive::new). */
const SLOT_TIME_FEATURES: readonly [Feature, number][] = [
  ["slot200", 200],
  ["slot250", 250],
  ["slot300", 300],
  ["slot350", 350],
];

/**
 * The genesis limits and the slot-time regime from epoch 1 with `deactivated` (feature ids) off and every
 * other feature active. Throws naming an id that is not a block-limit feature (the localnet cannot
 * deactivate it).
 */
export function blockLimitsWithout(deactivated: readonly string[]): {
  block: number;
  account: number;
  reducedSlotMs: number;
} {
  const off = new Set<Feature>();
  for (const id of deactivated) {
    const known = BLOCK_LIMIT_FEATURES[id];
    if (known === undefined) {
      let valid = false;
      try {
        valid = bs58.decode(id).length === 32;
      } catch {}
      throw new Error(
        valid
          ? `--deactivate-feature ${id}: the localnet can deactivate only the block-limit features (${Object.entries(
              BLOCK_LIMIT_FEATURES,
            )
              .map(([k, f]) => `${f.simd} ${k}`)
              .join(", ")})`
          : `--deactivate-feature: "${id}" is not a feature id (a base58 address)`,
      );
    }
    off.add(known.feature);
  }
  const legacy = SLOT_TIME_REGIMES[400]!;
  const raised = !off.has("raise100m");
  const block = raised ? raisedTo100m(MAX_BLOCK_UNITS) : MAX_BLOCK_UNITS;
  const account = raised ? raisedTo100m(legacy.account) : legacy.account;
  const regime = SLOT_TIME_FEATURES.find(([feature]) => !off.has(feature));
  return {
    block: Number(block),
    account: Number(account),
    reducedSlotMs: regime === undefined ? 400 : regime[1],
  };
}
