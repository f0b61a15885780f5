/**
 * JSON with u64 precision: numbers beyond 2^53 parse to bigint, and bigints serialize as plain
 * JSON numbers (as a node writes them), using the source-text access and `JSON.rawJSON` of Node 24.
 */

type Reviver = (this: unknown, key: string, value: unknown, context?: { source?: string }) => unknown;
const rawJSON = (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON;

const bigNumberReviver: Reviver = (_key, value, context) => {
  if (
    typeof value === "number" &&
    !Number.isSafeInteger(value) &&
    context?.source !== undefined &&
    /^-?\d+$/.test(context.source)
  ) {
    return BigInt(context.source);
  }
  return value;
};

/** Parses JSON, keeping integers beyond 2^53 exact as bigint. Throws SyntaxError on bad input. */
export function parseJson(text: string): unknown {
  // The reviver costs a call per value; only pay it when a long digit run could be a big integer.
  return /\d{16}/.test(text) ? JSON.parse(text, bigNumberReviver as never) : JSON.parse(text);
}

const bigintReplacer = (_key: string, v: unknown) => (typeof v === "bigint" ? rawJSON(v.toString()) : v);

/**
 * Serializes to JSON, writing bigint values as JSON numbers. Trees without bigints (large account
 * scans) take the native path; the replacer halves stringify speed, so it only runs on a retry.
 */
export function stringifyJson(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch (err) {
    if (err instanceof TypeError && /BigInt/i.test(err.message)) return JSON.stringify(value, bigintReplacer);
    throw err;
  }
}
