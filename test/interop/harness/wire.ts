/** Small helpers the command-line tests need: signing a prepared transaction, reading CLI JSON output. */
import { createPrivateKey, sign } from "node:crypto";
import bs58 from "bs58";
import { fromBinary } from "@bufbuild/protobuf";
import { ErrorInfoSchema } from "../../../gen/google/rpc/error_details_pb.js";
import type { ErrorInfo } from "../../../gen/google/rpc/error_details_pb.js";

const PKCS8_ED25519_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");

/**
 * Signs a wire transaction whose first signer is the payer (seed in hex): skips the signature slots
 * (compact-u16 count below 128), signs the message, writes slot 0. Returns the bytes and the signature.
 */
export function signWire(wire: Uint8Array, seedHex: string): { signed: Buffer; signature: string } {
  const count = wire[0];
  if (count === 0 || count >= 128) throw new Error(`cannot sign a transaction with ${count} signature slots`);
  const key = createPrivateKey({
    key: Buffer.concat([PKCS8_ED25519_PREFIX, Buffer.from(seedHex, "hex")]),
    format: "der",
    type: "pkcs8",
  });
  const sig = sign(null, wire.subarray(1 + 64 * count), key);
  const signed = Buffer.from(wire);
  sig.copy(signed, 1);
  return { signed, signature: bs58.encode(sig) };
}

/** Splits concatenated JSON values (what buf curl and grpcurl print for a stream) and parses each. */
export function parseJsonStream(text: string): any[] {
  const values: any[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === "{" || c === "[") {
      if (depth++ === 0) start = i;
    } else if (c === "}" || c === "]") {
      if (--depth === 0) values.push(JSON.parse(text.slice(start, i + 1)));
    }
  }
  return values;
}

/** Decodes a `google.rpc.ErrorInfo` given as base64 (how both tools print a detail they cannot resolve). */
export function decodeErrorInfo(base64: string): ErrorInfo {
  return fromBinary(ErrorInfoSchema, Buffer.from(base64, "base64"));
}
