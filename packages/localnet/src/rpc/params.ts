/**
 * Parameter parsing with agave's (serde / jsonrpc-core) error wording, shared by every method.
 *
 * Params arrive as untrusted JSON; each helper either returns a typed value or throws `-32602`
 * worded like a node: "`params` should have at least 1 argument(s)", "Invalid params: invalid
 * type: integer `1`, expected a string.", "Invalid params: unknown variant `x`, expected ...".
 */
import { JsonRpcError, RpcErrorCode, invalidParams, type Commitment, type MethodContext } from "./protocol.ts";

/** The `{ context, value }` envelope of methods that answer "with context". */
export interface WithContext<T> {
  context: { apiVersion: string; slot: bigint };
  value: T;
}

/**
 * The agave version this localnet imitates, everywhere (getVersion, getClusterNodes, every response
 * context): agave 4.4.0, the newest non-prerelease `solana-account-decoder` / `agave-feature-set` on
 * crates.io. (Until 4.4 it imitated 3.0.6, feature-set 3604001754, as devnet's 3.0.x nodes answered.)
 */
export const API_VERSION = "4.4.0";
/**
 * agave 4.4.0's feature-set identifier: the first 4 bytes (little-endian u32) of `agave-feature-set`
 * 4.4.0's `ID` (sha256 over the sorted distinct ids of its FEATURE_NAMES), which `solana-version`
 * reports. Printed by the crate itself through the decoder oracle (a test compares); the same program
 * on 3.0.6 prints 3604001754, what 3.0.x nodes answered. Not compared with a live 4.4.0 node.
 */
export const FEATURE_SET = 3_722_100_051;

/** Wraps a value in a response context for `slot`. */
export function withContext<T>(slot: bigint, value: T): WithContext<T> {
  return { context: { apiVersion: API_VERSION, slot }, value };
}

/** serde's description of a JSON value in "invalid type" errors. */
export function describe(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "boolean") return `boolean \`${value}\``;
  if (typeof value === "bigint") return `integer \`${value}\``;
  if (typeof value === "number")
    return Number.isInteger(value) ? `integer \`${value}\`` : `floating point \`${value}\``;
  if (typeof value === "string") return `string ${JSON.stringify(value)}`;
  if (Array.isArray(value)) return "sequence";
  return "map";
}

function invalidType(value: unknown, expected: string): JsonRpcError {
  return invalidParams(`Invalid params: invalid type: ${describe(value)}, expected ${expected}.`);
}

/** Checks the positional parameter count (`required` mandatory, at most `max`). */
export function expectArity(params: unknown[], required: number, max: number): void {
  if (params.length < required) {
    throw invalidParams(`\`params\` should have at least ${required} argument(s)`);
  }
  if (params.length > max) {
    throw invalidParams(
      `Invalid params: invalid length ${params.length}, expected at most ${max} elements in sequence.`,
    );
  }
}

/** A required string parameter. */
export function stringParam(value: unknown): string {
  if (typeof value !== "string") throw invalidType(value, "a string");
  return value;
}

/** A u64 (or usize) parameter; JSON numbers beyond 2^53 arrive as bigint from the server's parser. */
export function u64Param(value: unknown, what = "u64"): bigint {
  if (typeof value === "bigint") {
    if (value < 0n || value > 0xffffffffffffffffn)
      throw invalidParams(`Invalid params: invalid value: integer \`${value}\`, expected ${what}.`);
    return value;
  }
  if (typeof value === "number" && Number.isInteger(value)) {
    if (value < 0) throw invalidParams(`Invalid params: invalid value: integer \`${value}\`, expected ${what}.`);
    return BigInt(value);
  }
  throw invalidType(value, what);
}

/** An optional config object (absent or null means defaults). */
export function configParam(value: unknown): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (typeof value !== "object" || Array.isArray(value)) throw invalidType(value, "struct config");
  return value as Record<string, unknown>;
}

/** An optional boolean config field. */
export function boolField(config: Record<string, unknown>, name: string, fallback: boolean): boolean {
  const value = config[name];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== "boolean") throw invalidType(value, "a boolean");
  return value;
}

/** An optional u64 config field. */
export function u64Field(config: Record<string, unknown>, name: string): bigint | undefined {
  const value = config[name];
  if (value === undefined || value === null) return undefined;
  return u64Param(value);
}

/** An optional enum config field. */
export function enumField<T extends string>(
  config: Record<string, unknown>,
  name: string,
  variants: readonly T[],
): T | undefined {
  const value = config[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw invalidType(value, `one of ${variants.map((v) => `\`${v}\``).join(", ")}`);
  if (!(variants as readonly string[]).includes(value)) {
    throw invalidParams(
      `Invalid params: unknown variant \`${value}\`, expected one of ${variants.map((v) => `\`${v}\``).join(", ")}.`,
    );
  }
  return value as T;
}

const COMMITMENTS = ["processed", "confirmed", "finalized"] as const;

/** The commitment of a config object (agave's default is finalized). */
export function commitmentField(config: Record<string, unknown>, fallback: Commitment = "finalized"): Commitment {
  return enumField(config, "commitment", COMMITMENTS) ?? fallback;
}

/** Methods over history refuse `processed`, with agave's message. */
export function assertAtLeastConfirmed(commitment: Commitment): void {
  if (commitment === "processed") throw invalidParams("Method does not support commitment below `confirmed`");
}

/** Throws `-32016` when the context slot is below the caller's minContextSlot. */
export function checkMinContextSlot(slot: bigint, minContextSlot: bigint | undefined): void {
  if (minContextSlot !== undefined && slot < minContextSlot) {
    throw new JsonRpcError(RpcErrorCode.MIN_CONTEXT_SLOT_NOT_REACHED, "Minimum context slot has not been reached", {
      contextSlot: slot,
    });
  }
}

/**
 * The slot a read observes for a `{ commitment, minContextSlot }` config, as agave's
 * `get_bank_with_config` computes it (including the -32016 check).
 */
export function contextSlot(
  ctx: MethodContext,
  config: Record<string, unknown>,
  fallback: Commitment = "finalized",
): bigint {
  const slot = ctx.slotAt(commitmentField(config, fallback));
  checkMinContextSlot(slot, u64Field(config, "minContextSlot"));
  return slot;
}

/** Parses a base58 32-byte value (address or hash) the way agave's `verify_pubkey` words failures. */
export function base58Key(value: unknown, decode: (s: string) => Uint8Array | null): string {
  const text = stringParam(value);
  if (text.length > 44) throw invalidParams("Invalid param: WrongSize");
  const bytes = decode(text);
  if (bytes === null) throw invalidParams("Invalid param: Invalid");
  if (bytes.length !== 32) throw invalidParams("Invalid param: WrongSize");
  return text;
}

/** Parses a base58 signature (64 bytes) like agave's `verify_signature`. */
export function base58Signature(value: unknown, decode: (s: string) => Uint8Array | null): string {
  const text = stringParam(value);
  if (text.length > 88) throw invalidParams("Invalid param: WrongSize");
  const bytes = decode(text);
  if (bytes === null) throw invalidParams("Invalid param: Invalid");
  if (bytes.length !== 64) throw invalidParams("Invalid param: WrongSize");
  return text;
}

/**
 * A param typed `Option<CommitmentConfig>` in agave (not a context config): absent or null means
 * finalized, and an object must name `commitment`, since that struct's one field has no default.
 */
export function commitmentOnlyParam(value: unknown): Commitment {
  const config = configParam(value);
  if (value !== undefined && value !== null && !Object.hasOwn(config, "commitment")) {
    throw invalidParams("Invalid params: missing field `commitment`.");
  }
  return commitmentField(config);
}

/** An optional string config field. */
export function stringField(config: Record<string, unknown>, name: string): string | undefined {
  const value = config[name];
  if (value === undefined || value === null) return undefined;
  return stringParam(value);
}
