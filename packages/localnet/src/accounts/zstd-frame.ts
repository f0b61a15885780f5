/**
 * agave's `base64+zstd` frames. agave compresses with zstd's streaming encoder at the default level
 * (`zstd::stream::write::Encoder::new(Vec::new(), 0)`, write_all, finish): the input size is never
 * declared, so every frame has frame-header byte 0x00 and window byte 0x58 (window log 21) whatever
 * the data's size (but for empty data: see {@link compressLikeAgave}), and the block contents follow the level's parameters for an unknown size. Node's
 * one-shot compressor knows the size, sizes its window and tables to it and writes other bytes; its
 * streaming compressor, written to and then ended, writes agave's. That is asynchronous while the
 * encoders are synchronous, so an encoder puts a {@link ZstdFrame} where the text goes, and whoever
 * writes the answer out settles the pending frames first ({@link settleZstdFrames}).
 */
import { once } from "node:events";
import zlib from "node:zlib";

/** The base64 text of a frame, once compressed; JSON-serialises as that text. */
export class ZstdFrame {
  text: string | undefined;
  readonly data: Uint8Array;
  constructor(data: Uint8Array) {
    this.data = data;
  }
  toJSON(): string {
    if (this.text === undefined) throw new Error("a zstd frame was serialised before it was settled");
    return this.text;
  }
}

const pending: ZstdFrame[] = [];
let settling: Promise<void> = Promise.resolve();
let inFlight = 0;

/** A frame for `data`, compressed at the next {@link settleZstdFrames}. */
export function zstdFrame(data: Uint8Array): ZstdFrame {
  // A copy: the caller's bytes may be a view of a buffer that changes before the frame is settled.
  const frame = new ZstdFrame(data.slice());
  pending.push(frame);
  return frame;
}

/** agave's frame for `data`: written (ZSTD_e_continue), then ended (ZSTD_e_end) on its own. */
export async function compressLikeAgave(data: Uint8Array): Promise<Buffer> {
  const stream = zlib.createZstdCompress();
  const chunks: Buffer[] = [];
  stream.on("data", (chunk: Buffer) => chunks.push(chunk));
  const ended = once(stream, "end");
  // `end(data)` would hand the data over with ZSTD_e_end, which declares its size: the one-shot frame.
  // Empty data is never written, as Rust's `write_all(&[])` makes no call: the frame's first call is
  // then ZSTD_e_end with nothing, which declares size 0 (a single-segment frame, header byte 0x20).
  if (data.length === 0) stream.end();
  else stream.write(data, () => stream.end());
  await ended;
  return Buffer.concat(chunks);
}

/**
 * Compresses every frame made so far; null (nothing to wait for) when there is none, so answers
 * without zstd stay synchronous. Frames are compressed one at a time: each stream holds a few MB of
 * zstd state (a 2 MiB window), and a scan can make thousands.
 */
export function settleZstdFrames(): Promise<void> | null {
  if (pending.length === 0) {
    // Another caller may have taken this caller's frames into a batch still being compressed (the
    // queue is shared): wait for every batch in flight.
    return inFlight === 0 ? null : settling;
  }
  const batch = pending.splice(0);
  inFlight++;
  const run = settling
    .then(async () => {
      for (const frame of batch) {
        frame.text = (await compressLikeAgave(frame.data)).toString("base64");
      }
    })
    .finally(() => {
      inFlight--;
    });
  settling = run.catch(() => {});
  return run;
}
