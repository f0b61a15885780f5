/**
 * Reads a REST request's JSON body with a size cap. Integers beyond 2^53 keep every digit (as
 * bigints, through JSON.parse's source access), so a u64 sent as a bare JSON number is not rounded.
 */
import type { NodeRequest } from "../server/http-handler.ts";
import { SolgateError } from "../errors.ts";

/** The default body cap: far above any Solana transaction in base64 (~1.7 KB). */
export const DEFAULT_MAX_BODY_BYTES = 64 * 1024;

/** Reads and parses the body; undefined when it is empty. Throws REQUEST_TOO_LARGE or INVALID_PARAMETER. */
export async function readJsonBody(req: NodeRequest, maxBytes: number): Promise<unknown> {
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(maxBytes);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw tooLarge(maxBytes);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks, size).toString("utf8");
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text, exactIntegers);
  } catch (e) {
    throw new SolgateError("INVALID_PARAMETER", `the request body is not valid JSON: ${(e as Error).message}`, {
      field: "body",
    });
  }
}

function exactIntegers(this: unknown, _key: string, value: unknown, context?: { source?: string }): unknown {
  if (
    typeof value === "number" &&
    !Number.isSafeInteger(value) &&
    context?.source !== undefined &&
    /^-?\d+$/.test(context.source)
  ) {
    return BigInt(context.source);
  }
  return value;
}

function tooLarge(maxBytes: number): SolgateError {
  return new SolgateError("REQUEST_TOO_LARGE", `the request body is larger than ${maxBytes} bytes`, {
    limit: maxBytes,
  });
}
