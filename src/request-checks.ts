/** Checks shared by the cores on what a request names: addresses and page sizes. */
import { isAddress } from "@solana/kit";
import type { Address } from "@solana/kit";
import { SolgateError } from "./errors.ts";

/** `value` as an address; SolgateError INVALID_ADDRESS naming `field` otherwise. */
export function assertAddress(value: string, field: string): Address {
  if (typeof value !== "string" || !isAddress(value)) {
    throw new SolgateError(
      "INVALID_ADDRESS",
      `${field} must be a base58 address of 32 bytes, got ${JSON.stringify(String(value).slice(0, 64))}`,
      { field },
    );
  }
  return value;
}

/** A page size: undefined or 0 means `defaults`; 1-`max` otherwise, or SolgateError INVALID_PARAMETER (`limit`). */
export function pageLimit(limit: number | undefined, defaults: number, max: number): number {
  const value = limit === undefined || limit === 0 ? defaults : limit;
  if (!Number.isInteger(value) || value < 1 || value > max) {
    throw new SolgateError("INVALID_PARAMETER", `limit must be 1-${max} (0 means ${defaults}), got ${value}`, {
      field: "limit",
    });
  }
  return value;
}
