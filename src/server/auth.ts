/**
 * API-key authentication. Every RPC but health and reflection needs `Authorization: Bearer <key>`.
 * Keys are compared as SHA-256 digests with `timingSafeEqual`, so neither the key's content nor its
 * length leaks through timing; the header value is never logged.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { createContextKey } from "@connectrpc/connect";
import type { Interceptor } from "@connectrpc/connect";
import type { RateLimiter } from "./rate-limit.ts";
import { SolgateError, toConnectError } from "../errors.ts";

/** Services anyone may call: tooling and load balancers must work without a key. */
export const PUBLIC_SERVICES: ReadonlySet<string> = new Set([
  "grpc.health.v1.Health",
  "grpc.reflection.v1.ServerReflection",
  "grpc.reflection.v1alpha.ServerReflection",
]);

/** A key and the name logs, metrics and limits know it by (never the key itself). */
export interface NamedApiKey {
  readonly name: string;
  readonly key: string;
}

/** Checks `Authorization` header values against the configured keys. */
export interface ApiKeyChecker {
  /** Whether the header value (e.g. `Bearer abc`) carries a valid key. Undefined/null = missing. */
  isAuthorized(authorization: string | null | undefined): boolean;
  /** The name of the key the header value carries; undefined if it carries none. */
  nameOf(authorization: string | null | undefined): string | undefined;
  /**
   * The name of the key the header value carries.
   * @throws SolgateError UNAUTHENTICATED unless the header value carries a valid key.
   */
  assertAuthorized(authorization: string | null | undefined): string;
}

/** The name a key without one is known by: a digest prefix, stable and not the key. */
export function defaultKeyName(key: string): string {
  return `key-${digest(key).toString("hex").slice(0, 8)}`;
}

/** How many distinct valid header values a checker remembers (spellings of `Bearer <key>` per key). */
const MAX_VERIFIED = 1024;

/** Builds a checker over `keys` (non-empty). With no keys, nothing is authorized. */
export function createApiKeyChecker(keys: readonly (string | NamedApiKey)[]): ApiKeyChecker {
  const entries = keys
    .map((k) => (typeof k === "string" ? { name: defaultKeyName(k), key: k } : k))
    .filter((k) => k.key.length > 0)
    .map((k) => ({ name: k.name, digest: digest(k.key) }));
  // Header values that carried a valid key, remembered so a client's next calls skip the digest (a cached
  // read paid ~5% of its CPU for it). Only valid values go in, so a wrong key is always digested and compared
  // in constant time; a hit tells the caller only what the answer tells it anyway.
  const verified = new Map<string, string>();
  const identify = (authorization: string | null | undefined): string | undefined => {
    if (typeof authorization !== "string") return undefined;
    const known = verified.get(authorization);
    if (known !== undefined) return known;
    const name = identifyByDigest(authorization);
    if (name !== undefined && verified.size < MAX_VERIFIED) verified.set(authorization, name);
    return name;
  };
  const identifyByDigest = (authorization: string): string | undefined => {
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
    if (match === null) return undefined;
    const presented = digest(match[1]);
    // Compare against every key, without stopping early, so the position of a match does not show.
    let name: string | undefined;
    for (const e of entries) if (timingSafeEqual(e.digest, presented)) name ??= e.name;
    return name;
  };
  return {
    isAuthorized: (authorization) => identify(authorization) !== undefined,
    nameOf: identify,
    assertAuthorized(authorization) {
      const name = identify(authorization);
      if (name !== undefined) return name;
      throw new SolgateError(
        "UNAUTHENTICATED",
        authorization == null || authorization === ""
          ? "missing Authorization header; send `Authorization: Bearer <api key>`"
          : "invalid API key",
      );
    },
  };
}

/** The name of the key a call was made with, for logs and metrics (set by the auth interceptor). */
export const KEY_NAME = createContextKey<string | undefined>(undefined, { description: "API key name" });

/**
 * Set by the layer that already checked the call's Authorization header (the request gate, the REST
 * layer) to the key's name, so the key is digested once per call, not twice. Context values are the
 * server's own: no client can set one.
 */
export const CHECKED_KEY = createContextKey<string | undefined>(undefined, { description: "API key already checked" });

/**
 * A Connect interceptor that rejects calls to non-public services without a valid key, then counts
 * the call against the key's rate limit, if there is a limiter.
 */
export function createAuthInterceptor(checker: ApiKeyChecker, limiter?: RateLimiter): Interceptor {
  // Not an async function: a call without a limiter costs no promise of its own here (the hot path).
  return (next) => (req) => {
    if (PUBLIC_SERVICES.has(req.service.typeName)) return next(req);
    let name: string;
    try {
      name = req.contextValues.get(CHECKED_KEY) ?? checker.assertAuthorized(req.header.get("authorization"));
      req.contextValues.set(KEY_NAME, name);
    } catch (e) {
      return Promise.reject(toConnectError(e));
    }
    if (limiter === undefined) return next(req);
    return limiter.consume(name).then(
      () => next(req),
      (e: unknown) => {
        throw toConnectError(e);
      },
    );
  };
}

function digest(value: string): Buffer {
  return createHash("sha256").update(value, "utf8").digest();
}
