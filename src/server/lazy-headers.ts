/**
 * Request headers as a `Headers` object, copied from the Node request on first use. A cached read whose
 * interceptors and implementation read no header (info logging and tracing off, the key already checked)
 * copies none: each `set` of a `Headers` validates and converts its name and value, which a cached read
 * paid for on every call (docs/benchmarks.md, "The hot path").
 */
import type { IncomingHttpHeaders } from "node:http";

const BASE = Headers.prototype as unknown as Record<string | symbol, (this: Headers) => unknown>;

/** A `Headers` whose entries a filler adds the first time anything reads or changes it. */
export class LazyHeaders extends Headers {
  #filler: ((target: Headers) => void) | undefined;

  constructor(filler: (target: Headers) => void) {
    super();
    this.#filler = filler;
  }

  #fill(): void {
    const filler = this.#filler;
    if (filler === undefined) return;
    this.#filler = undefined;
    filler(this);
  }

  override get(name: string): string | null {
    this.#fill();
    return super.get(name);
  }
  override has(name: string): boolean {
    this.#fill();
    return super.has(name);
  }
  override set(name: string, value: string): void {
    this.#fill();
    super.set(name, value);
  }
  override append(name: string, value: string): void {
    this.#fill();
    super.append(name, value);
  }
  override delete(name: string): void {
    this.#fill();
    super.delete(name);
  }
  override getSetCookie(): string[] {
    this.#fill();
    return super.getSetCookie();
  }
  override forEach(callback: (value: string, key: string, parent: Headers) => void, thisArg?: unknown): void {
    this.#fill();
    super.forEach(callback, thisArg);
  }
  // The iterators: in Node's Headers, but not in the TypeScript lib this project compiles against.
  entries(): IterableIterator<[string, string]> {
    this.#fill();
    return BASE.entries.call(this) as IterableIterator<[string, string]>;
  }
  keys(): IterableIterator<string> {
    this.#fill();
    return BASE.keys.call(this) as IterableIterator<string>;
  }
  values(): IterableIterator<string> {
    this.#fill();
    return BASE.values.call(this) as IterableIterator<string>;
  }
  [Symbol.iterator](): IterableIterator<[string, string]> {
    this.#fill();
    return BASE[Symbol.iterator].call(this) as IterableIterator<[string, string]>;
  }
}

/** Every header of a Node request (HTTP/2 pseudo-headers left out), copied on first use. */
export function requestHeaders(from: IncomingHttpHeaders): Headers {
  return new LazyHeaders((target) => copyRequestHeaders(from, target));
}

/** Appends every header of a Node request to `target`, HTTP/2 pseudo-headers left out. */
export function copyRequestHeaders(from: IncomingHttpHeaders, target: Headers): Headers {
  for (const name in from) {
    if (name.charCodeAt(0) === 58 /* ":" */) continue;
    const value = from[name];
    if (value === undefined) continue;
    if (typeof value === "string") target.append(name, value);
    else for (const v of value) target.append(name, v);
  }
  return target;
}
