/**
 * A guarded HTTP GET for data Solgate does not control: NFT metadata JSON (whose URL anyone who
 * mints can choose) and marketplace stats. One deadline covers the whole exchange, redirects
 * included; bodies are capped; only http(s) is spoken at every hop; and, unless allowed, hosts
 * that resolve to anything but a public unicast address are refused (loopback, private, link-local
 * cloud metadata, every special-purpose range of the IANA registries as ipaddr.js classifies them,
 * addresses that embed another such as 6to4 and Teredo, and the host's own addresses), checked on
 * the resolved address itself so DNS cannot smuggle one in.
 */
import { lookup as dnsLookup } from "node:dns";
import type { LookupAddress, LookupOptions } from "node:dns";
import { request as httpRequest } from "node:http";
import type { IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { isIP } from "node:net";
import { networkInterfaces } from "node:os";
import ipaddr from "ipaddr.js";

/** Why a GET failed. */
export type HttpGetFailure =
  | "scheme"
  | "private-address"
  | "timeout"
  | "too-large"
  | "status"
  | "redirect"
  | "network"
  | "aborted";

/** A failed GET; `kind` says why (and `status` for HTTP errors). */
export class HttpGetError extends Error {
  readonly kind: HttpGetFailure;
  readonly status: number | undefined;
  constructor(kind: HttpGetFailure, message: string, status?: number) {
    super(message);
    this.name = "HttpGetError";
    this.kind = kind;
    this.status = status;
  }
}

/** Options of {@link httpGet}. */
export interface HttpGetOptions {
  /** Whole exchange, redirects included. */
  timeoutMs: number;
  /** Largest body accepted, bytes. */
  maxBytes: number;
  /** Redirects followed (default 3); each must stay http(s). */
  maxRedirects?: number;
  headers?: Record<string, string>;
  /** Permit loopback and private addresses (tests, or a marketplace proxy on the LAN). Default false. */
  allowPrivateNetworks?: boolean;
  /** POST `body` instead of GET (webhook deliveries, under the same guard); redirects are then not followed. */
  post?: { body: Buffer; contentType: string };
  signal?: AbortSignal;
}

/** A successful (2xx) response. */
export interface HttpGetResult {
  status: number;
  body: Buffer;
  /** The URL that answered, after redirects. */
  url: string;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** How long the host's own addresses are trusted before they are read again. */
const OWN_ADDRESSES_TTL_MS = 60_000;
let ownAddresses: { read: number; set: ReadonlySet<string> } | undefined;

/** The host's own interface addresses, normalised as ipaddr.js writes them. */
function isOwnAddress(normalized: string): boolean {
  const now = Date.now();
  if (ownAddresses === undefined || now - ownAddresses.read > OWN_ADDRESSES_TTL_MS) {
    const set = new Set<string>();
    for (const address of Object.values(networkInterfaces()).flat()) {
      const text = address?.address.split("%")[0];
      if (text !== undefined && ipaddr.isValid(text)) set.add(ipaddr.process(text).toNormalizedString());
    }
    ownAddresses = { read: now, set };
  }
  return ownAddresses.set.has(normalized);
}

/**
 * Whether `address` (an IP literal) is anything but a public unicast address of another host. IPv4
 * mapped into IPv6 (::ffff:10.0.0.1) is judged as the IPv4 address it reaches.
 */
export function isNonPublicAddress(address: string): boolean {
  if (isIP(address) === 0 || !ipaddr.isValid(address)) return true;
  const parsed = ipaddr.process(address);
  return parsed.range() !== "unicast" || isOwnAddress(parsed.toNormalizedString());
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** dns.lookup that only ever hands public addresses to the socket. */
function publicOnlyLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, []);
    const usable = addresses.filter((a) => !isNonPublicAddress(a.address));
    if (usable.length === 0) {
      return callback(
        Object.assign(new HttpGetError("private-address", `${hostname} resolves to a non-public address`), {
          code: "ENONPUBLIC",
        }),
        [],
      );
    }
    if (options.all) callback(null, usable);
    else callback(null, usable[0].address, usable[0].family);
  });
}

/** Parses `raw` and checks it is http(s); throws HttpGetError("scheme") otherwise. */
function httpUrl(raw: string, base?: URL): URL {
  let url: URL;
  try {
    url = new URL(raw, base);
  } catch {
    throw new HttpGetError("scheme", "not a URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new HttpGetError("scheme", `only http(s) is fetched, not ${url.protocol}`);
  return url;
}

/**
 * GETs `rawUrl`, following up to `maxRedirects` http(s) redirects, and resolves to a 2xx response
 * whose body is at most `maxBytes`. Everything else rejects with an {@link HttpGetError}.
 */
export async function httpGet(rawUrl: string, options: HttpGetOptions): Promise<HttpGetResult> {
  const deadline = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([deadline, options.signal]) : deadline;
  let url = httpUrl(rawUrl);
  for (let hop = 0; ; hop++) {
    const response = await exchange(url, options, signal);
    if (REDIRECTS.has(response.status)) {
      const location = response.location;
      if (location === undefined) throw new HttpGetError("redirect", "a redirect without a Location");
      if (options.post !== undefined || hop >= (options.maxRedirects ?? 3))
        throw new HttpGetError("redirect", "too many redirects", response.status);
      url = httpUrl(location, url);
      continue;
    }
    if (response.status < 200 || response.status > 299)
      throw new HttpGetError("status", `HTTP ${response.status}`, response.status);
    return { status: response.status, body: response.body, url: url.href };
  }
}

interface Exchange {
  status: number;
  location?: string;
  body: Buffer;
}

function exchange(url: URL, options: HttpGetOptions, signal: AbortSignal): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(abortError(signal));
    const host = url.hostname.replace(/^\[|\]$/gu, "");
    if (!options.allowPrivateNetworks && isIP(host) !== 0 && isNonPublicAddress(host)) {
      return reject(new HttpGetError("private-address", `${host} is not a public address`));
    }
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    const post = options.post;
    const req = send(url, {
      method: post === undefined ? "GET" : "POST",
      headers: {
        accept: "application/json",
        "user-agent": "solgate",
        ...(post === undefined ? {} : { "content-type": post.contentType, "content-length": String(post.body.length) }),
        ...options.headers,
      },
      ...(options.allowPrivateNetworks ? {} : { lookup: publicOnlyLookup as never }),
      agent: false,
    });
    const onAbort = () => req.destroy(abortError(signal));
    signal.addEventListener("abort", onAbort, { once: true });
    const finish = (fn: () => void) => {
      signal.removeEventListener("abort", onAbort);
      fn();
    };
    req.on("error", (err) =>
      finish(() => reject(err instanceof HttpGetError ? err : new HttpGetError("network", err.message))),
    );
    req.on("response", (res: IncomingMessage) => {
      const status = res.statusCode ?? 0;
      if (REDIRECTS.has(status)) {
        res.resume();
        const location = res.headers.location;
        return finish(() => {
          req.destroy();
          resolve({ status, location, body: Buffer.alloc(0) });
        });
      }
      const declared = Number(res.headers["content-length"]);
      if (Number.isFinite(declared) && declared > options.maxBytes) {
        return finish(() => {
          req.destroy();
          reject(new HttpGetError("too-large", `the body is ${declared} bytes, more than ${options.maxBytes}`));
        });
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > options.maxBytes) {
          req.destroy(new HttpGetError("too-large", `the body exceeds ${options.maxBytes} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      res.on("end", () => finish(() => resolve({ status, body: Buffer.concat(chunks) })));
      res.on("error", (err) =>
        finish(() => reject(err instanceof HttpGetError ? err : new HttpGetError("network", err.message))),
      );
    });
    req.end(options.post?.body);
  });
}

function abortError(signal: AbortSignal): HttpGetError {
  const reason = signal.reason as Error | undefined;
  return reason?.name === "TimeoutError"
    ? new HttpGetError("timeout", "timed out")
    : new HttpGetError("aborted", "aborted");
}
