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
 * Element texts of the arrays met by the `JSON.stringify` under way (see {@link withElementTexts}), in
 * the order their placeholders appear in its output. Stringifying is synchronous: one at a time.
 */
const pendingTexts: (readonly string[])[] = [];
const PLACEHOLDER = "\u0000localnet-element-texts:";

/**
 * Marks `array` as serialising to `[texts.join(",")]` under {@link stringifyJson}: the caller
 * guarantees that `texts[i]` is exactly `JSON.stringify(array[i])`, typically memoised, so that a scan
 * of 100,000 accounts does not serialise them all again. The array stays an ordinary array for readers
 * in the process (and under plain `JSON.stringify` it would come out as a placeholder string: only
 * `stringifyJson` writes responses).
 */
export function withElementTexts<T>(array: T[], texts: readonly string[]): T[] {
  Object.defineProperty(array, "toJSON", {
    value: () => {
      pendingTexts.push(texts);
      return PLACEHOLDER + (pendingTexts.length - 1);
    },
    enumerable: false,
  });
  return array;
}

/** Puts the marked arrays' element texts where their placeholders are. */
function spliceElementTexts(out: string): string {
  let result = "";
  let from = 0;
  for (let i = 0; i < pendingTexts.length; i++) {
    const marker = JSON.stringify(PLACEHOLDER + i);
    const at = out.indexOf(marker, from);
    result += `${out.slice(from, at)}[${pendingTexts[i].join(",")}]`;
    from = at + marker.length;
  }
  return result + out.slice(from);
}

/**
 * Serializes to JSON, writing bigint values as JSON numbers. Trees without bigints (large account
 * scans) take the native path; the replacer halves stringify speed, so it only runs on a retry.
 */
export function stringifyJson(value: unknown): string {
  pendingTexts.length = 0;
  try {
    let out: string;
    try {
      out = JSON.stringify(value);
    } catch (err) {
      if (!(err instanceof TypeError && /BigInt/i.test(err.message))) throw err;
      pendingTexts.length = 0;
      out = JSON.stringify(value, bigintReplacer);
    }
    return pendingTexts.length === 0 ? out : spliceElementTexts(out);
  } finally {
    pendingTexts.length = 0;
  }
}
