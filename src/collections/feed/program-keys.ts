/** The programs whose instructions change a collection's membership, and the log wrappers Bubblegum writes to. */
export { TOKEN_METADATA_PROGRAM } from "../../solana/program-ids.ts";

/** Metaplex Bubblegum (compressed NFTs). */
export const BUBBLEGUM_PROGRAM = "BGUMAp9Gq7iTEuizy4pqaxsTyUCBK68MDfK752saRPUY";

/** SPL Noop and MPL Noop: Bubblegum's leaf events are the data of its calls to one of them. */
export const LOG_WRAPPERS: ReadonlySet<string> = new Set([
  "noopb9bkMVfRPU8AsbpTUg8AWkHHKwYxL8jqsCR3MsN",
  "mnoopTCrg4p8ry25e4bcWA9XZjbNjMTfgYVGGEdRsf3",
]);
