/**
 * A Jito block engine's URL as operators write it: the host (`https://mainnet.block-engine.jito.wtf`), its
 * API root (`.../api/v1`), or one of its endpoints (`.../api/v1/transactions`, `.../api/v1/bundles`), with
 * the auth UUID riding in the query (`?uuid=...`) as Jito's examples put it. Read once here for the send paths
 * (transactions) and the block engine client (bundles, tip floor).
 */

/** Where a block engine's API lives, and the auth to send it as `x-jito-auth`. */
export interface JitoEndpoint {
  /** The API root, `.../api/v1`, no trailing slash, no `uuid`. */
  readonly api: string;
  /** `auth` when given, else the URL's `uuid`; undefined when neither. */
  readonly auth?: string;
}

/** Reads `url` (any of the forms above); an `auth` given apart wins over the URL's `uuid`. */
export function jitoEndpointOf(url: string, auth?: string): JitoEndpoint {
  const parsed = new URL(url);
  const uuid = auth ?? parsed.searchParams.get("uuid") ?? undefined;
  parsed.searchParams.delete("uuid");
  const base = parsed
    .toString()
    .replace(/\/+$/, "")
    .replace(/\/api\/v1\/(transactions|bundles)$/, "/api/v1");
  const api = /\/api\/v1$/.test(base) ? base : `${base}/api/v1`;
  return { api, ...(uuid === undefined ? {} : { auth: uuid }) };
}
