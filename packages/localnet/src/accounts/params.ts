/**
 * Positional params decoded the way agave's jsonrpc-core + serde stack does it, so that bad input
 * gets the same -32602 wording a node gives: "`params` should have at least 1 argument(s)",
 * "Invalid params: invalid type: integer `5`, expected a string.", "Invalid param: WrongSize".
 * Unknown config fields are ignored, as serde does by default.
 */
import { invalidParams, JsonRpcError, RpcErrorCode, type Commitment, type MethodContext } from "../rpc/protocol.ts";
import { isParsedPubkey, parsePubkey, type ParsedPubkey } from "./base58.ts";
import type { AccountEncoding, DataSlice } from "./encode-account.ts";

/** A serde failure; the method boundary words it as `Invalid params: <message>.` */
export class SerdeError extends Error {}

/** serde's `Unexpected` rendering of a JSON value (as serde_json reports it from a `Value`). */
export function unexpected(value: unknown): string {
  if (value === null || value === undefined) return "unit value";
  if (typeof value === "boolean") return `boolean \`${value}\``;
  if (typeof value === "number")
    return Number.isInteger(value) ? `integer \`${value}\`` : `floating point \`${value}\``;
  if (typeof value === "bigint") return `integer \`${value}\``;
  if (typeof value === "string") return `string ${JSON.stringify(value)}`;
  if (Array.isArray(value)) return "sequence";
  return "map";
}

export function invalidType(value: unknown, expected: string): SerdeError {
  return new SerdeError(`invalid type: ${unexpected(value)}, expected ${expected}`);
}

/** Runs a decoder, turning serde failures into agave's -32602 "Invalid params: ...". */
export function decodeParams<T>(decode: () => T): T {
  try {
    return decode();
  } catch (error) {
    if (error instanceof SerdeError) throw invalidParams(`Invalid params: ${error.message}.`);
    throw error;
  }
}

/** jsonrpc-derive's arity checks for a method with `required` leading and `total` positional params. */
export function checkArity(params: unknown[], required: number, total: number): void {
  if (params.length < required) throw invalidParams(`\`params\` should have at least ${required} argument(s)`);
  if (params.length > total) throw new SerdeError(`invalid length ${params.length}, expected fewer elements in array`);
}

export function expectString(value: unknown): string {
  if (typeof value !== "string") throw invalidType(value, "a string");
  return value;
}

export function expectBool(value: unknown): boolean {
  if (typeof value !== "boolean") throw invalidType(value, "a boolean");
  return value;
}

/** An unsigned integer field (`usize`/`u64`); JSON numbers beyond 2^53 are already inexact here. */
export function expectUnsigned(value: unknown, rustType: "usize" | "u64"): number {
  if (typeof value === "bigint") {
    if (value < 0n) throw new SerdeError(`invalid value: integer \`${value}\`, expected ${rustType}`);
    return Number(value);
  }
  if (typeof value !== "number" || !Number.isInteger(value)) throw invalidType(value, rustType);
  if (value < 0) throw new SerdeError(`invalid value: integer \`${value}\`, expected ${rustType}`);
  return value;
}

export function expectObject(value: unknown, structName: string): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw invalidType(value, `struct ${structName}`);
  return value as Record<string, unknown>;
}

/** A string-named enum variant (`#[serde(rename_all = "camelCase")]` unit variants). */
export function expectVariant<T extends string>(value: unknown, variants: readonly T[]): T {
  if (typeof value !== "string") throw invalidType(value, "string or map");
  if (!(variants as readonly string[]).includes(value)) throw unknownVariant(value, variants);
  return value as T;
}

/** serde's `unknown variant` error, listing the expected names as serde's `OneOf` does. */
export function unknownVariant(value: string, variants: readonly string[]): SerdeError {
  const names = variants.map((v) => `\`${v}\``);
  const expected =
    names.length === 1
      ? `expected ${names[0]}`
      : names.length === 2
        ? `expected ${names[0]} or ${names[1]}`
        : `expected one of ${names.join(", ")}`;
  return new SerdeError(`unknown variant \`${value}\`, ${expected}`);
}

/** An optional field: absent and null both mean none. */
export function optional<T>(value: unknown, decode: (value: unknown) => T): T | undefined {
  return value === undefined || value === null ? undefined : decode(value);
}

/** Parses a pubkey param with agave's `verify_pubkey` error: "Invalid param: WrongSize" / "Invalid". */
export function verifyPubkey(text: string): ParsedPubkey {
  const parsed = parsePubkey(text);
  if (!isParsedPubkey(parsed)) throw invalidParams(`Invalid param: ${parsed}`);
  return parsed;
}

const COMMITMENTS: readonly Commitment[] = ["processed", "confirmed", "finalized"];
const ENCODINGS: readonly AccountEncoding[] = ["binary", "base58", "base64", "jsonParsed", "base64+zstd"];

/** `commitment` and `minContextSlot` of a config (agave's flattened `CommitmentConfig` + context). */
export interface ContextConfig {
  readonly commitment: Commitment;
  readonly minContextSlot: number | undefined;
}

/** agave's `RpcAccountInfoConfig`. */
export interface AccountInfoConfig extends ContextConfig {
  readonly encoding: AccountEncoding | undefined;
  readonly dataSlice: DataSlice | undefined;
}

/** Reads commitment (default finalized) and minContextSlot from a config object. */
export function contextConfig(config: Record<string, unknown>): ContextConfig {
  return {
    commitment: optional(config.commitment, (v) => expectVariant(v, COMMITMENTS)) ?? "finalized",
    minContextSlot: optional(config.minContextSlot, (v) => expectUnsigned(v, "u64")),
  };
}

function dataSlice(value: unknown): DataSlice {
  const slice = expectObject(value, "UiDataSliceConfig");
  if (slice.offset === undefined) throw new SerdeError("missing field `offset`");
  if (slice.length === undefined) throw new SerdeError("missing field `length`");
  return { offset: expectUnsigned(slice.offset, "usize"), length: expectUnsigned(slice.length, "usize") };
}

/** Decodes an optional `RpcAccountInfoConfig`-shaped param (also the base of program-account configs). */
export function accountInfoConfig(value: unknown, structName = "RpcAccountInfoConfig"): AccountInfoConfig {
  const config = optional(value, (v) => expectObject(v, structName)) ?? {};
  return {
    ...contextConfig(config),
    encoding: optional(config.encoding, (v) => expectVariant(v, ENCODINGS)),
    dataSlice: optional(config.dataSlice, dataSlice),
  };
}

/** Decodes an optional `CommitmentConfig` param (`{commitment}`). */
export function commitmentConfig(value: unknown): Commitment {
  const config = optional(value, (v) => expectObject(v, "CommitmentConfig"));
  if (config === undefined) return "finalized";
  // Taken as `Option<CommitmentConfig>` directly, whose one field has no serde default: `{}` is refused.
  if (!Object.hasOwn(config, "commitment")) throw new SerdeError("missing field `commitment`");
  return optional(config.commitment, (v) => expectVariant(v, COMMITMENTS)) ?? "finalized";
}

/**
 * The slot a read observes, after agave's `minContextSlot` check (-32016 "Minimum context slot has
 * not been reached", with `data.contextSlot`).
 */
export function contextSlot(ctx: MethodContext, config: ContextConfig): bigint {
  const slot = ctx.slotAt(config.commitment);
  if (config.minContextSlot !== undefined && slot < BigInt(config.minContextSlot)) {
    throw new JsonRpcError(RpcErrorCode.MIN_CONTEXT_SLOT_NOT_REACHED, "Minimum context slot has not been reached", {
      contextSlot: Number(slot),
    });
  }
  return slot;
}
