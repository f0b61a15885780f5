/**
 * A guarded HTTP GET for data Solgate does not control: NFT metadata JSON (whose URL anyone who
 * mints can choose) and marketplace stats. One deadline covers the whole exchange, redirects
 * included; bodies are capped; only http(s) is spoken at every hop; and, unless allowed, hosts
 * that resolve to loopback, private, link-local (cloud metadata) or other non-public addresses are
 * refused, checked on the resolved address itself so DNS cannot smuggle one in.
 */
import { lookup as dnsLookup } from "node:dns";
import type { LookupAddress, LookupOptions } from "node:dns";
import { request as httpRequest } from "node:http";
import type { IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { BlockList, isIP } from "node:net";

/** Why a GET failed. */
export type HttpGetFailure = "scheme" | "private-address" | "timeout" | "too-large" | "status" | "redirect" | "network" | "aborted";

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

/** Addresses that are not the public internet. */
const NON_PUBLIC = (() => {
  const list = new BlockList();
  for (const [net, prefix] of [
    ["0.0.0.0", 8], ["10.0.0.0", 8], ["100.64.0.0", 10], ["127.0.0.0", 8], ["169.254.0.0", 16], ["172.16.0.0", 12],
    ["192.0.0.0", 24], ["192.168.0.0", 16], ["198.18.0.0", 15], ["224.0.0.0", 4], ["240.0.0.0", 4],
  ] as const) list.addSubnet(net, prefix, "ipv4");
  for (const [net, prefix] of [["::", 128], ["::1", 128], ["fc00::", 7], ["fe80::", 10], ["ff00::", 8], ["64:ff9b::", 96]] as const) {
    list.addSubnet(net, prefix, "ipv6");
  }
  return list;
})();

/** Whether `address` (an IP literal) is loopback, private, link-local or otherwise not public. */
export function isNonPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return NON_PUBLIC.check(address, "ipv4");
  if (family !== 6) return true;
  // IPv4-mapped IPv6 (::ffff:10.0.0.1) reaches the IPv4 address: judge that.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/iu.exec(address);
  if (mapped) return NON_PUBLIC.check(mapped[1], "ipv4");
  return NON_PUBLIC.check(address, "ipv6");
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** dns.lookup that only ever hands public addresses to the socket. */
function publicOnlyLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, []);
    const usable = addresses.filter((a) => !isNonPublicAddress(a.address));
    if (usable.length === 0) {
      return callback(Object.assign(new HttpGetError("private-address", `${hostname} resolves to a non-public address`), { code: "ENONPUBLIC" }), []);
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
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new HttpGetError("scheme", `only http(s) is fetched, not ${url.protocol}`);
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
      if (hop >= (options.maxRedirects ?? 3)) throw new HttpGetError("redirect", "too many redirects");
      url = httpUrl(location, url);
      continue;
    }
    if (response.status < 200 || response.status > 299) throw new HttpGetError("status", `HTTP ${response.status}`, response.status);
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
    const req = send(url, {
      method: "GET",
      headers: { accept: "application/json", "user-agent": "solgate", ...options.headers },
      ...(options.allowPrivateNetworks ? {} : { lookup: publicOnlyLookup as never }),
      agent: false,
    });
    const onAbort = () => req.destroy(abortError(signal));
    signal.addEventListener("abort", onAbort, { once: true });
    const finish = (fn: () => void) => {
      signal.removeEventListener("abort", onAbort);
      fn();
    };
    req.on("error", (err) => finish(() => reject(err instanceof HttpGetError ? err : new HttpGetError("network", err.message))));
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
      res.on("error", (err) => finish(() => reject(err instanceof HttpGetError ? err : new HttpGetError("network", err.message))));
    });
    req.end();
  });
}

function abortError(signal: AbortSignal): HttpGetError {
  const reason = signal.reason as Error | undefined;
  return reason?.name === "TimeoutError" ? new HttpGetError("timeout", "timed out") : new HttpGetError("aborted", "aborted");
}
