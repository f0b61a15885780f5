/**
 * The request gate's reading of a body: how it is framed (raw or in gRPC/Connect envelopes, protobuf
 * or JSON, compressed or not) and why it is not a valid request, in plain words. Connect answers
 * protobuf that does not decode, a broken envelope, and an envelope flagged compressed in a request that
 * names no compression with INTERNAL; these are the gate's to refuse as INVALID_ARGUMENT first.
 */
import { fromBinary } from "@bufbuild/protobuf";
import type { DescMessage } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import type { Compression, UniversalServerRequest } from "@connectrpc/connect/protocol";

/** How a body is framed. */
export interface BodyFraming {
  /** gRPC-style 5-byte envelopes (gRPC, gRPC-Web, Connect streaming), or the message alone (Connect unary). */
  enveloped: boolean;
  json: boolean;
  /** The compression the request names, or undefined for none (`identity`). */
  encoding: string | undefined;
}

const ENVELOPED = new Map<string, { json: boolean; encodingHeader: string }>([
  ["application/grpc", { json: false, encodingHeader: "grpc-encoding" }],
  ["application/grpc+proto", { json: false, encodingHeader: "grpc-encoding" }],
  ["application/grpc+json", { json: true, encodingHeader: "grpc-encoding" }],
  ["application/grpc-web", { json: false, encodingHeader: "grpc-encoding" }],
  ["application/grpc-web+proto", { json: false, encodingHeader: "grpc-encoding" }],
  ["application/grpc-web+json", { json: true, encodingHeader: "grpc-encoding" }],
  ["application/connect+proto", { json: false, encodingHeader: "connect-content-encoding" }],
  ["application/connect+json", { json: true, encodingHeader: "connect-content-encoding" }],
]);

/**
 * The framing of `request`'s body; undefined for what the gate leaves to Connect: GET, uncompressed unary Connect JSON
 * (its JSON errors are INVALID_ARGUMENT already), gRPC-Web text, and content types Connect refuses.
 */
export function bodyFraming(request: UniversalServerRequest): BodyFraming | undefined {
  if (request.method !== "POST") return undefined;
  const type = (request.header.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
  const identity = (name: string | null) => (name === null || name === "identity" ? undefined : name);
  if (type === "application/proto")
    return { enveloped: false, json: false, encoding: identity(request.header.get("content-encoding")) };
  // Unary Connect JSON is Connect's to parse; only a compressed one is checked here, for decompressing at all.
  if (type === "application/json") {
    const encoding = identity(request.header.get("content-encoding"));
    return encoding === undefined ? undefined : { enveloped: false, json: true, encoding };
  }
  const enveloped = ENVELOPED.get(type);
  if (enveloped === undefined) return undefined;
  return { enveloped: true, json: enveloped.json, encoding: identity(request.header.get(enveloped.encodingHeader)) };
}

/**
 * Why `bytes` are not a valid request of `input` in `framing`; undefined if they are, or if Connect refuses
 * them cleanly itself (a compression it does not know: UNIMPLEMENTED; a message over the limit:
 * RESOURCE_EXHAUSTED). JSON messages are left to Connect once their envelopes are sound.
 */
export async function bodyProblem(
  input: DescMessage,
  bytes: Uint8Array,
  framing: BodyFraming,
  compressions: readonly Compression[],
  readMaxBytes: number,
): Promise<string | undefined> {
  const compression =
    framing.encoding === undefined ? undefined : compressions.find((c) => c.name === framing.encoding);
  if (framing.encoding !== undefined && compression === undefined) return undefined;
  const messages: Uint8Array[] = [];
  if (!framing.enveloped) messages.push(bytes);
  else {
    const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (let at = 0; at < view.length; ) {
      if (at + 5 > view.length) return `an envelope ends inside its 5-byte prefix (${view.length - at} bytes)`;
      const flags = view[at];
      const length = view.readUInt32BE(at + 1);
      if (at + 5 + length > view.length)
        return `an envelope's length prefix promises ${length} bytes but ${view.length - at - 5} follow`;
      if ((flags & ~1) !== 0)
        return `an envelope has flags 0x${flags.toString(16).padStart(2, "0")}; a request message has 0x00, or 0x01 when compressed`;
      if (flags === 1 && compression === undefined)
        return "an envelope is flagged compressed but the request names no compression";
      const payload = view.subarray(at + 5, at + 5 + length);
      if (flags === 0) messages.push(payload);
      else {
        const plain = await decompressed(compression!, payload, readMaxBytes);
        if (typeof plain === "string" || plain === undefined) return plain;
        messages.push(plain);
      }
      at += 5 + length;
    }
  }
  if (!framing.enveloped && compression !== undefined) {
    const plain = await decompressed(compression, bytes, readMaxBytes);
    if (typeof plain === "string" || plain === undefined) return plain;
    messages[0] = plain;
  }
  if (framing.json) return undefined;
  for (const message of messages) {
    try {
      fromBinary(input, message);
    } catch (e) {
      return plainReason(e);
    }
  }
  return undefined;
}

/** The decompressed bytes; a reason when they do not decompress; undefined when over the limit (Connect says so). */
async function decompressed(
  compression: Compression,
  bytes: Uint8Array,
  readMaxBytes: number,
): Promise<Uint8Array | string | undefined> {
  try {
    return await compression.decompress(bytes, readMaxBytes);
  } catch (e) {
    if (e instanceof ConnectError && e.code === Code.ResourceExhausted) return undefined;
    return `a message does not decompress as ${compression.name}`;
  }
}

/** protobuf-es's reason in a few plain words, without its internals. */
export function plainReason(error: unknown): string {
  const text = error instanceof Error ? error.message : "";
  if (/utf-?8/i.test(text)) return "a string field is not valid UTF-8";
  if (/premature EOF|out of range|truncated/i.test(text)) return "it ends inside a field";
  if (/wire type|cant skip|cannot skip/i.test(text)) return "a field has an invalid wire type";
  if (/varint/i.test(text)) return "a varint is malformed";
  return "malformed protobuf";
}
