/**
 * `geyser.Geyser` as a Connect service: `Subscribe` (a bidirectional stream: each request replaces the
 * client's filter, a request with `ping` is answered with a pong and changes nothing, `from_slot`
 * replays kept slots first), `SubscribeReplayInfo` and the unary calls. Methods not listed here
 * (`SubscribeDeshred`, `SubscribeGossip`) answer Unimplemented.
 *
 * Each client has a bounded queue: a client that falls `queueLimit` updates behind gets what is queued
 * and then `Internal: lagged to send an update`, as the plugin ends a client whose channel is full.
 */
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { hostname } from "node:os";
import {
  CommitmentLevel,
  type Geyser,
  SubscribeRequestSchema,
  SubscribeUpdateSchema,
  type SubscribeRequest,
  type SubscribeUpdate,
} from "../../gen/geyser_pb.js";
import { MAX_PROCESSING_AGE } from "../chain/blockhash-window.ts";
import type { Chain } from "../chain/chain.ts";
import type { Commitment } from "../rpc/protocol.ts";
import { API_VERSION } from "../rpc/params.ts";
import type { GeyserEvent } from "./events.ts";
import { Filter, FilterError } from "./filter.ts";
import { ReplayUnavailable, type GeyserHub, type HubClient } from "./hub.ts";

/** The proto version the server implements (yellowstone-grpc-proto, third_party/README.md). */
export const GEYSER_PROTO_VERSION = "12.7.0";

export interface GeyserServiceOptions {
  chain: Chain;
  hub: GeyserHub;
  queueLimit: number;
  pingMs: number;
}

const COMMITMENTS: Record<number, Commitment> = {
  [CommitmentLevel.PROCESSED]: "processed",
  [CommitmentLevel.CONFIRMED]: "confirmed",
  [CommitmentLevel.FINALIZED]: "finalized",
};

function commitmentOf(level: CommitmentLevel | undefined): Commitment {
  const commitment = COMMITMENTS[level ?? CommitmentLevel.PROCESSED];
  if (commitment === undefined) throw new ConnectError(`failed to create CommitmentLevel from ${level}`, Code.Unknown);
  return commitment;
}

/** One Subscribe stream: its filter, its bounded queue and its end. */
class Session implements HubClient {
  filter = new Filter(create(SubscribeRequestSchema));
  private readonly queue: SubscribeUpdate[] = [];
  private head = 0;
  private failure: ConnectError | null = null;
  private wake: (() => void) | null = null;
  private readonly limit: number;

  constructor(limit: number) {
    this.limit = limit;
  }

  get commitment(): CommitmentLevel {
    return this.filter.commitment;
  }

  get wantsAccounts(): boolean {
    return this.filter.wantsAccounts;
  }

  deliver(event: GeyserEvent): void {
    if (this.failure !== null) return;
    for (const update of this.filter.updates(event)) {
      if (this.queue.length - this.head >= this.limit) {
        this.fail(new ConnectError("lagged to send an update", Code.Internal));
        return;
      }
      this.push(update);
    }
  }

  /** Queues past the limit (pings, pongs, replay: the plugin awaits room for these instead of cutting off). */
  push(update: SubscribeUpdate): void {
    if (this.failure !== null) return;
    this.queue.push(update);
    this.signal();
  }

  /** Ends the stream with `error` once what is queued has been sent. */
  fail(error: ConnectError): void {
    this.failure ??= error;
    this.signal();
  }

  signal(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  async *drain(signal: AbortSignal): AsyncGenerator<SubscribeUpdate> {
    const onAbort = () => this.signal();
    signal.addEventListener("abort", onAbort);
    try {
      while (!signal.aborted) {
        if (this.head < this.queue.length) {
          const update = this.queue[this.head]!;
          this.queue[this.head++] = undefined as never;
          if (this.head > 1024 && this.head * 2 > this.queue.length) {
            this.queue.splice(0, this.head);
            this.head = 0;
          }
          yield update;
        } else if (this.failure !== null) {
          throw this.failure;
        } else {
          await new Promise<void>((resolve) => {
            this.wake = resolve;
          });
        }
      }
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
  }
}

const ping = (): SubscribeUpdate => create(SubscribeUpdateSchema, { updateOneof: { case: "ping", value: {} } });

export function createGeyserService(options: GeyserServiceOptions): Partial<ServiceImpl<typeof Geyser>> {
  const { chain, hub } = options;

  /** Reads the client's requests until it stops sending; each replaces the filter. */
  async function readRequests(requests: AsyncIterable<SubscribeRequest>, session: Session): Promise<void> {
    for await (const request of requests) {
      let filter: Filter;
      try {
        filter = new Filter(request);
      } catch (error) {
        if (!(error instanceof FilterError)) throw error;
        session.fail(new ConnectError(`failed to create filter: ${error.message}`, Code.InvalidArgument));
        return;
      }
      if (request.ping !== undefined) {
        session.push(create(SubscribeUpdateSchema, { updateOneof: { case: "pong", value: { id: request.ping.id } } }));
        continue;
      }
      session.filter = filter;
      if (request.fromSlot === undefined) continue;
      let events: GeyserEvent[];
      try {
        events = hub.replay(request.fromSlot, filter.commitment);
      } catch (error) {
        if (!(error instanceof ReplayUnavailable)) throw error;
        session.fail(new ConnectError(error.message, Code.OutOfRange));
        return;
      }
      for (const event of events) for (const update of filter.updates(event)) session.push(update);
    }
  }

  return {
    async *subscribe(requests: AsyncIterable<SubscribeRequest>, context: HandlerContext) {
      const session = new Session(options.queueLimit);
      const detach = hub.attach(session);
      // As the plugin's `tokio::time::interval`, whose first tick is immediate: the first ping also
      // sends the response headers, which clients (tonic's among them) wait for before streaming.
      session.push(ping());
      const timer = setInterval(() => session.push(ping()), options.pingMs);
      readRequests(requests, session).catch(() => {
        // The client went away (reset or closed): the response side ends on the abort signal.
      });
      try {
        yield* session.drain(context.signal);
      } finally {
        clearInterval(timer);
        detach();
      }
    },

    subscribeReplayInfo() {
      return { firstAvailable: hub.firstAvailable() };
    },

    ping(request) {
      return { count: request.count };
    },

    getLatestBlockhash(request) {
      const slot = chain.slotAt(commitmentOf(request.commitment));
      const block = chain.block(slot);
      if (block === undefined) throw new ConnectError("block is not available yet", Code.Internal);
      return { slot, blockhash: block.blockhash, lastValidBlockHeight: block.blockHeight + MAX_PROCESSING_AGE };
    },

    getBlockHeight(request) {
      return { blockHeight: chain.blockHeightAt(chain.slotAt(commitmentOf(request.commitment))) };
    },

    getSlot(request) {
      return { slot: chain.slotAt(commitmentOf(request.commitment)) };
    },

    isBlockhashValid(request) {
      const slot = chain.slotAt(commitmentOf(request.commitment));
      const produced = chain.lastValidBlockHeight(request.blockhash);
      const height = chain.blockHeightAt(slot);
      const valid = produced !== undefined && produced - MAX_PROCESSING_AGE <= height && height <= produced;
      return { slot, valid };
    },

    getVersion() {
      return {
        version: JSON.stringify({
          version: {
            package: "solgate-localnet-geyser",
            version: GEYSER_PROTO_VERSION,
            proto: GEYSER_PROTO_VERSION,
            solana: API_VERSION,
          },
          extra: { hostname: hostname() },
        }),
      };
    },
  };
}
