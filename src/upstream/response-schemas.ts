/**
 * What every upstream answer must look like before any core sees it: a valibot schema per JSON-RPC and
 * DAS method Solgate calls, checked at the boundary (resilient-transport.ts), so a provider's wrong type,
 * missing field or integer outside u64 becomes UPSTREAM_INVALID_RESPONSE instead of a crash deeper in.
 *
 * The schemas hold what Solgate reads and what the method promises, no more: objects are loose (a node
 * version that adds a field is fine), program-specific `jsonParsed` contents are checked only where a core
 * reads an amount. Integers arrive as bigint (kit's parser reads every integer so), so a u64 is a bigint in
 * [0, 2^64 - 1]; the plain-JSON scans hold no integer Solgate reads.
 */
import * as v from "valibot";

const U64_MAX = 2n ** 64n - 1n;
const I64_MIN = -(2n ** 63n);
const I64_MAX = 2n ** 63n - 1n;

/** An unsigned 64-bit integer as kit reads it (bigint). */
const u64 = v.pipe(v.bigint(), v.minValue(0n), v.maxValue(U64_MAX));
/** A signed 64-bit integer (blockTime). */
const i64 = v.pipe(v.bigint(), v.minValue(I64_MIN), v.maxValue(I64_MAX));
/** A u64 the node sends as a decimal string (token amounts in jsonParsed). */
const u64String = v.pipe(
  v.string(),
  v.check((s) => /^\d{1,20}$/.test(s) && BigInt(s) <= U64_MAX, "not a u64"),
);
const base58 = v.pipe(
  v.string(),
  v.check((s) => /^[1-9A-HJ-NP-Za-km-z]{32,88}$/.test(s), "not base58"),
);
const commitment = v.picklist(["processed", "confirmed", "finalized"]);
const context = v.looseObject({ slot: u64 });
/** `{context, value}`, as every "with context" method answers. */
const withContext = <T extends v.GenericSchema>(value: T) => v.looseObject({ context, value });

/** Encoded account data: `[data, encoding]`, or a jsonParsed object. */
const encodedData = v.tuple([v.string(), v.string()]);
const parsedData = v.looseObject({
  program: v.string(),
  space: u64,
  parsed: v.union([
    v.string(),
    v.looseObject({
      // A token account's amount is the one parsed integer a core turns into a u64.
      info: v.optional(
        v.looseObject({ tokenAmount: v.optional(v.looseObject({ amount: u64String, decimals: v.optional(u64) })) }),
      ),
    }),
  ]),
});
const account = v.looseObject({
  data: v.union([encodedData, parsedData]),
  executable: v.boolean(),
  lamports: u64,
  owner: base58,
  rentEpoch: u64,
  space: v.optional(u64),
});

const signatureStatus = v.looseObject({
  slot: u64,
  confirmations: v.nullable(u64),
  err: v.unknown(),
  confirmationStatus: v.nullish(commitment),
});

// An asset id is checked as an address by the collection core; here it must be a string at least.
const assetId = v.pipe(v.string(), v.minLength(1));
const das = {
  asset: v.looseObject({ id: assetId }),
  page: v.looseObject({ items: v.array(v.looseObject({ id: assetId })), total: v.optional(u64OrNumber()) }),
};

/** DAS answers are parsed as plain JSON (no bigint), so a count there is a safe non-negative integer. */
function u64OrNumber() {
  return v.union([u64, v.pipe(v.number(), v.safeInteger(), v.minValue(0))]);
}

/** The schemas of the `result` of each JSON-RPC and DAS method Solgate calls through kit or the DAS client. */
export const RESULT_SCHEMAS: Readonly<Record<string, v.GenericSchema>> = {
  getAccountInfo: withContext(v.nullable(account)),
  getMultipleAccounts: withContext(v.array(v.nullable(account))),
  getTokenAccountsByOwner: withContext(v.array(v.looseObject({ pubkey: base58, account }))),
  getSlot: u64,
  getBlockHeight: u64,
  getBlock: v.nullable(
    v.looseObject({
      transactions: v.array(
        v.looseObject({
          transaction: encodedData,
          meta: v.nullable(
            v.looseObject({
              fee: v.optional(u64),
              loadedAddresses: v.nullish(v.looseObject({ writable: v.array(base58) })),
            }),
          ),
        }),
      ),
    }),
  ),
  getRecentPrioritizationFees: v.array(v.looseObject({ slot: u64, prioritizationFee: u64 })),
  getLatestBlockhash: withContext(v.looseObject({ blockhash: base58, lastValidBlockHeight: u64 })),
  isBlockhashValid: withContext(v.boolean()),
  getSignatureStatuses: withContext(v.array(v.nullable(signatureStatus))),
  getTransaction: v.nullable(
    v.looseObject({
      slot: u64,
      blockTime: v.nullish(i64),
      meta: v.nullable(v.looseObject({ fee: v.optional(u64) })),
    }),
  ),
  simulateTransaction: withContext(
    v.looseObject({
      err: v.unknown(),
      logs: v.nullish(v.array(v.string())),
      unitsConsumed: v.optional(u64),
    }),
  ),
  sendTransaction: base58,
  getAsset: v.nullable(das.asset),
  getAssetsByGroup: das.page,
  getAssetsByOwner: das.page,
};

/** The PubSub notifications the signature feed consumes (their `result`, as kit hands it on). */
export const NOTIFICATION_SCHEMAS: Readonly<Record<string, v.GenericSchema>> = {
  signatureNotification: v.looseObject({
    context,
    value: v.union([v.literal("receivedSignature"), v.looseObject({ err: v.unknown() })]),
  }),
};

/** The key scan's own answer: the pubkeys its stream parser found. */
export const KEY_SCAN_SCHEMAS: Readonly<Record<string, v.GenericSchema>> = {
  getProgramAccounts: v.array(base58),
};

/** The slice scan's answer, parsed as plain JSON: each account's key and its base64 slice. */
export const SLICE_SCAN_SCHEMAS: Readonly<Record<string, v.GenericSchema>> = {
  getProgramAccounts: v.array(
    v.looseObject({ pubkey: base58, account: v.looseObject({ data: v.tuple([v.string(), v.literal("base64")]) }) }),
  ),
};

/** Where an answer first departs from its method's schema; undefined when it fits (or no schema is known). */
export interface SchemaMismatch {
  /** A dot path into `result` (`value.0.slot`), or `result` for the whole. */
  readonly path: string;
  /** What was expected there, in valibot's words (never the value itself). */
  readonly expected: string;
}

/** Checks `result` against the schema of `method` in `schemas`; stops at the first mismatch. */
export function checkResult(
  schemas: Readonly<Record<string, v.GenericSchema>>,
  method: string,
  result: unknown,
): SchemaMismatch | undefined {
  const schema = schemas[method];
  if (schema === undefined) return undefined;
  const checked = v.safeParse(schema, result, { abortEarly: true, abortPipeEarly: true });
  if (checked.success) return undefined;
  const issue = checked.issues[0];
  const path = v.getDotPath(issue);
  return { path: path === null ? "result" : `result.${path}`, expected: issue.expected ?? issue.kind };
}
