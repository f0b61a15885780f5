/**
 * The official Node client (`@triton-one/yellowstone-grpc`, a napi binding of the Rust client) wrapped
 * for tests: full requests from partial ones, and a stream whose updates are awaited by predicate.
 */
import * as yellowstone from "@triton-one/yellowstone-grpc";
import type {
  SubscribeRequest,
  SubscribeRequestFilterAccounts,
  SubscribeRequestFilterBlocks,
  SubscribeRequestFilterTransactions,
  SubscribeUpdate,
} from "@triton-one/yellowstone-grpc";

/** The client class. The package's types are CommonJS (`default` is its class); its ESM build exports it as default. */
type ClientConstructor = typeof yellowstone.default.default;
export type Client = InstanceType<ClientConstructor>;
const loaded = yellowstone.default as unknown as ClientConstructor | { default: ClientConstructor };
const ClientClass: ClientConstructor = "default" in loaded ? loaded.default : loaded;

/** A request with every map present (the client's encoder requires them). */
export function request(partial: Partial<SubscribeRequest>): SubscribeRequest {
  return {
    accounts: {},
    slots: {},
    transactions: {},
    transactionsStatus: {},
    blocks: {},
    blocksMeta: {},
    entry: {},
    accountsDataSlice: [],
    ...partial,
  };
}

export const txFilter = (f: Partial<SubscribeRequestFilterTransactions>): SubscribeRequestFilterTransactions => ({
  accountInclude: [],
  accountExclude: [],
  accountRequired: [],
  ...f,
});

export const blockFilter = (f: Partial<SubscribeRequestFilterBlocks> = {}): SubscribeRequestFilterBlocks => ({
  accountInclude: [],
  ...f,
});

export const accountFilter = (f: Partial<SubscribeRequestFilterAccounts>): SubscribeRequestFilterAccounts => ({
  account: [],
  owner: [],
  filters: [],
  ...f,
});

/** One open Subscribe stream. */
export interface TestStream {
  /** The first update (from the start of the stream) matching `predicate`; later calls see later ones too. */
  next(predicate: (u: SubscribeUpdate) => boolean, timeoutMs?: number, what?: string): Promise<SubscribeUpdate>;
  /** Every update received so far. */
  readonly received: SubscribeUpdate[];
  write(request: SubscribeRequest): void;
  /** Settles with the stream's error (never, while it runs). */
  readonly failed: Promise<Error>;
  close(): void;
}

export async function connectClient(url: string, token?: string): Promise<Client> {
  const client = new ClientClass(url, token, undefined);
  await client.connect();
  return client;
}

export async function openStream(client: Client, first: SubscribeRequest): Promise<TestStream> {
  const stream = await client.subscribe();
  const received: SubscribeUpdate[] = [];
  const waiters = new Set<() => void>();
  let failure: Error | null = null;
  const failed = new Promise<Error>((resolve) => {
    stream.on("error", (error: Error) => {
      failure = error;
      resolve(error);
      for (const wake of waiters) wake();
    });
  });
  stream.on("data", (update: SubscribeUpdate) => {
    received.push(update);
    for (const wake of waiters) wake();
  });
  stream.write(first);
  return {
    received,
    failed,
    write: (r) => stream.write(r),
    next(predicate, timeoutMs = 10_000, what = "an update") {
      return new Promise((resolve, reject) => {
        let seen = 0;
        const check = () => {
          for (; seen < received.length; seen++) {
            if (predicate(received[seen]!)) {
              done();
              resolve(received[seen]!);
              return;
            }
          }
          if (failure) {
            done();
            reject(failure);
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`timed out waiting for ${what}`));
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    close: () => stream.destroy(),
  };
}
