/**
 * The feature gates of agave's block limits, which `--deactivate-feature` can turn off. The localnet
 * has no feature set of its own for packing: it packs blocks by two numbers (the congestion work's
 * LOCALNET_BLOCK_CU_LIMIT and LOCALNET_ACCOUNT_CU_LIMIT), so deactivating one of these features sets
 * the numbers agave would use without it. Ids and values: agave-feature-set and
 * cost-model/src/block_cost_limits.rs.
 */
import bs58 from "bs58";

export const BLOCK_LIMIT_ENV = {
  block: "LOCALNET_BLOCK_CU_LIMIT",
  account: "LOCALNET_ACCOUNT_CU_LIMIT",
} as const;

type Feature = "raise50m" | "raise60m" | "raise100m" | "raiseAccount";

/** The features, by id, and whether the localnet's defaults (60M block, 24M account) count them active. */
export const BLOCK_LIMIT_FEATURES: Record<string, { feature: Feature; simd: string; activeByDefault: boolean }> = {
  "5oMCU3JPaFLr8Zr4ct7yFA7jdk6Mw1RmB8K4u9ZbS42z": { feature: "raise50m", simd: "SIMD-0207", activeByDefault: true },
  "6oMCUgfY6BzZ6jwB681J6ju5Bh6CjVXbd7NeWYqiXBSu": { feature: "raise60m", simd: "SIMD-0256", activeByDefault: true },
  P1BCUMpAC7V2GRBRiJCNUgpMyWZhoqt3LKo712ePqsz: { feature: "raise100m", simd: "SIMD-0286", activeByDefault: false },
  // Active on mainnet, the localnet's default since the packing work (docs/localnet-congestion.md).
  htsptAwi2yRoZH83SKaUXykeZGtZHgxkS2QwW1pssR8: { feature: "raiseAccount", simd: "SIMD-0306", activeByDefault: true },
};

/** agave's per-account limit before SIMD-0306 (MAX_WRITABLE_ACCOUNT_UNITS). */
const ACCOUNT_LIMIT_BEFORE_0306 = 12_000_000;

/**
 * The block and account limits with `deactivated` (feature ids) off and the other features at their
 * defaults. Throws naming an id that is not a block-limit feature (the localnet cannot deactivate it).
 */
export function blockLimitsWithout(deactivated: readonly string[]): { block: number; account: number } {
  const active = new Set<Feature>(
    Object.values(BLOCK_LIMIT_FEATURES)
      .filter((f) => f.activeByDefault)
      .map((f) => f.feature),
  );
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
    active.delete(known.feature);
  }
  // agave picks the newest active raise (cost_tracker / block_cost_limits).
  const block = active.has("raise100m")
    ? 100_000_000
    : active.has("raise60m")
      ? 60_000_000
      : active.has("raise50m")
        ? 50_000_000
        : 48_000_000;
  // As agave's apply_simd_0306_cost_tracker_changes (the packing work's accountLimitFor).
  const account = active.has("raiseAccount") ? (block * 40) / 100 : ACCOUNT_LIMIT_BEFORE_0306;
  return { block, account };
}
