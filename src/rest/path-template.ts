/**
 * `google.api.http` path templates (`/v1/{chain}/collections/{address}`), compiled once at start
 * and matched per request. The subset served: literal segments, `*`, single-segment variables
 * (`{field}`, `{field=*}`, `{a.b}`) and a trailing `:verb`. Multi-segment forms (`**`,
 * `{name=things/*}`) are refused at start, so an annotation the transcoder cannot honour is a
 * start-up error rather than a path that silently never matches.
 */

/** One segment of a compiled template. */
type Segment = { kind: "literal"; value: string } | { kind: "variable"; fieldPath: string } | { kind: "wildcard" };

/** A compiled template. */
export interface PathTemplate {
  /** The template as written in the annotation. */
  readonly source: string;
  /** The request fields its variables bind, in order (`["chain", "address"]`). */
  readonly variables: readonly string[];
  /**
   * How many `/`-separated segments a path it matches has (`/v1/{chain}/network/fees`: 4): the
   * segments of `path.slice(1).split("/")`, the verb being part of the last. Lets a router try only
   * the templates a path could fit.
   */
  readonly segmentCount: number;
  /**
   * Matches a request path (without its query string, still percent-encoded). Returns the bound
   * variables, percent-decoded, or undefined when the path does not fit. Throws `PathDecodeError`
   * for a segment that fits but is not valid percent-encoding.
   */
  match(path: string): Record<string, string> | undefined;
}

/** A path segment that is not valid percent-encoded UTF-8. */
export class PathDecodeError extends Error {
  readonly fieldPath: string;
  constructor(fieldPath: string) {
    super(`path segment for ${fieldPath} is not valid percent-encoding`);
    this.name = "PathDecodeError";
    this.fieldPath = fieldPath;
  }
}

const IDENT_PATH = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;

/** Compiles a template; throws with the reason for anything outside the served subset. */
export function compilePathTemplate(source: string): PathTemplate {
  const fail = (why: string): never => {
    throw new Error(`unsupported google.api.http path template ${JSON.stringify(source)}: ${why}`);
  };
  if (!source.startsWith("/")) fail("it must start with /");
  let body = source.slice(1);
  let verb: string | undefined;
  const lastSlash = body.lastIndexOf("/");
  const colon = body.indexOf(":", lastSlash + 1);
  // A colon after the last `}` or in the last literal segment introduces the verb.
  if (colon !== -1 && !body.slice(colon).includes("}")) {
    verb = body.slice(colon + 1);
    body = body.slice(0, colon);
    if (verb === "") fail("empty verb");
  }
  const segments: Segment[] = body.split("/").map((raw): Segment => {
    if (raw === "") return fail("empty segment");
    if (raw === "*") return { kind: "wildcard" };
    if (raw === "**") return fail("`**` is not supported");
    if (raw.startsWith("{")) {
      if (!raw.endsWith("}")) return fail(`variable ${raw} spans several segments`);
      const inner = raw.slice(1, -1);
      const eq = inner.indexOf("=");
      const fieldPath = eq === -1 ? inner : inner.slice(0, eq);
      if (eq !== -1 && inner.slice(eq + 1) !== "*")
        fail(`variable ${raw}: only single-segment variables are supported`);
      if (!IDENT_PATH.test(fieldPath)) fail(`variable ${raw} does not name a field`);
      return { kind: "variable", fieldPath };
    }
    if (/[{}*]/.test(raw)) return fail(`segment ${raw} mixes a literal with a variable`);
    return { kind: "literal", value: raw };
  });
  const variables = segments.flatMap((s) => (s.kind === "variable" ? [s.fieldPath] : []));
  if (new Set(variables).size !== variables.length) fail("a field is bound twice");

  return {
    source,
    variables,
    segmentCount: segments.length,
    match(path) {
      let rest = path;
      if (verb !== undefined) {
        if (!rest.endsWith(`:${verb}`)) return undefined;
        rest = rest.slice(0, -verb.length - 1);
      }
      if (!rest.startsWith("/")) return undefined;
      const parts = rest.slice(1).split("/");
      if (parts.length !== segments.length) return undefined;
      for (let i = 0; i < segments.length; i++) {
        const segment = segments[i];
        if (segment.kind === "literal" ? parts[i] !== segment.value : parts[i] === "") return undefined;
      }
      // Decoded only once the whole path fits, so a bad escape in a path of another route is not an error here.
      const bound: Record<string, string> = {};
      for (let i = 0; i < segments.length; i++) {
        const segment = segments[i];
        if (segment.kind === "variable") bound[segment.fieldPath] = decodeSegment(parts[i], segment.fieldPath);
      }
      return bound;
    },
  };
}

function decodeSegment(part: string, fieldPath: string): string {
  if (!part.includes("%")) return part;
  try {
    return decodeURIComponent(part);
  } catch {
    throw new PathDecodeError(fieldPath);
  }
}
