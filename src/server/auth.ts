/**
 * API-key authentication. Every RPC but health and reflection needs `Authorization: Bearer <key>`.
 * Keys are compared as SHA-256 digests with `timingSafeEqual`, so neither the key's content nor its
 * length leaks through timing; the header value is never logged.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { Interceptor } from "@connectrpc/connect";
import { SolgateError, toConnectError } from "../errors.ts";

/** Services anyone may call: tooling and load balancers must work without a key. */
export const PUBLIC_SERVICES: ReadonlySet<string> = new Set([
  "grpc.health.v1.Health",
  "grpc.reflection.v1.ServerReflection",
  "grpc.reflection.v1alpha.ServerReflection",
]);

/** Checks `Authorization` header values against the configured keys. */
export interface ApiKeyChecker {
  /** Whether the header value (e.g. `Bearer abc`) carries a valid key. Undefined/null = missing. */
  isAuthorized(authorization: string | null | undefined): boolean;
  /** Throws SolgateError UNAUTHENTICATED unless the header value carries a valid key. */
  assertAuthorized(authorization: string | null | undefined): void;
}

/** Builds a checker over `keys` (non-empty strings). With no keys, nothing is authorized. */
export function createApiKeyChecker(keys: readonly string[]): ApiKeyChecker {
  const digests = keys.filter((k) => k.length > 0).map(digest);
  const isAuthorized = (authorization: string | null | undefined): boolean => {
    if (typeof authorization !== "string") return false;
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
    if (match === null) return false;
    const presented = digest(match[1]);
    // Compare against every key, without stopping early, so the position of a match does not show.
    let ok = false;
    for (const d of digests) ok = timingSafeEqual(d, presented) || ok;
    return ok;
  };
  return {
    isAuthorized,
    assertAuthorized(authorization) {
      if (isAuthorized(authorization)) return;
      throw new SolgateError(
        "UNAUTHENTICATED",
        authorization == null || authorization === ""
          ? "missing Authorization header; send `Authorization: Bearer <api key>`"
          : "invalid API key",
      );
    },
  };
}

/** A Connect interceptor that rejects calls to non-public services without a valid key. */
export function createAuthInterceptor(checker: ApiKeyChecker): Interceptor {
  return (next) => async (req) => {
    if (!PUBLIC_SERVICES.has(req.service.typeName)) {
      try {
        checker.assertAuthorized(req.header.get("authorization"));
      } catch (e) {
        throw toConnectError(e);
      }
    }
    return next(req);
  };
}

function digest(value: string): Buffer {
  return createHash("sha256").update(value, "utf8").digest();
}
