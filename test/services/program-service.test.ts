import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { createClient, createRouterTransport, ConnectError, Code } from "@connectrpc/connect";
import { toJson } from "@bufbuild/protobuf";
import { ProgramService, ListProgramAccountsResponseSchema } from "../../gen/solgate/v1/program_service_pb.js";
import { DataFormat } from "../../gen/solgate/v1/program_pb.js";
import { createProgramServiceImpl } from "../../src/services/program-service.ts";
import { createChainRegistry } from "../../src/chains.ts";
import type { ChainContext } from "../../src/chains.ts";
import { createErrorInterceptor } from "../../src/server/interceptors.ts";
import { createLogger } from "../../src/server/logger.ts";
import { reasonOf } from "../../src/errors.ts";
import { createUpstream } from "../../src/upstream/upstream.ts";
import type { Upstream } from "../../src/upstream/upstream.ts";
import { createProgramAccounts } from "../../src/programs/program-accounts.ts";
import type { ProgramAccounts, ProgramAccountsQuery } from "../../src/programs/program-accounts.ts";
import { toProgramAccountItem } from "../../src/programs/account-mapping.ts";
import type { RpcAccount } from "../../src/programs/account-mapping.ts";
import { startFaultServer } from "../upstream/fault-server.ts";
import type { FaultServer } from "../upstream/fault-server.ts";

const TOKEN = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";
const USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";

let node: FaultServer;
let upstream: Upstream;

/** A chain context holding only what ProgramService uses; touching anything else fails the test. */
function chain(programs: ProgramAccounts): ChainContext {
  const used: Record<string, unknown> = { name: "localnet", upstream, programs };
  return new Proxy(used, {
    get(target, key) {
      if (typeof key === "string" && !(key in target) && key !== "then")
        throw new Error(`ProgramService touched chain.${key}`);
      return target[key as string];
    },
  }) as unknown as ChainContext;
}

function clientFor(chains: ChainContext[]) {
  const registry = createChainRegistry(chains, chains[0].name);
  const transport = createRouterTransport(
    (router) => router.service(ProgramService, createProgramServiceImpl({ chains: registry })),
    { router: { interceptors: [createErrorInterceptor(createLogger({ level: "silent" }))] } },
  );
  return createClient(ProgramService, transport);
}

async function connectError(promise: Promise<unknown>): Promise<ConnectError> {
  const e = await promise.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(ConnectError);
  return e as ConnectError;
}

beforeAll(async () => {
  node = await startFaultServer({ kind: "status", status: 500 });
  upstream = createUpstream({ chain: "localnet", rpcUrls: [node.url], maxRetries: 0 });
});
afterAll(async () => {
  await upstream.close();
  await node.close();
});

describe("ProgramService over an in-memory Connect transport", () => {
  it("maps core errors to codes and reasons without calling the upstream", async () => {
    const client = clientFor([chain(createProgramAccounts({ upstream }))]);
    const cases: [Parameters<typeof client.listProgramAccounts>[0], Code, string][] = [
      [{ programId: "nope" }, Code.InvalidArgument, "INVALID_ADDRESS"],
      [{ programId: TOKEN, match: [`0:${USDC}`], limit: 501 }, Code.InvalidArgument, "INVALID_PARAMETER"],
      [{ programId: TOKEN, match: ["0-abc"] }, Code.InvalidArgument, "INVALID_PARAMETER"],
      [{ programId: TOKEN, match: [`0:${USDC}`], cursor: "garbage" }, Code.InvalidArgument, "INVALID_PARAMETER"],
      [{ programId: TOKEN }, Code.FailedPrecondition, "QUERY_TOO_BROAD"],
      [{ programId: TOKEN, size: 165n }, Code.FailedPrecondition, "QUERY_TOO_BROAD"],
      [{ chain: "mars", programId: TOKEN }, Code.NotFound, "UNKNOWN_CHAIN"],
    ];
    for (const [request, code, reason] of cases) {
      const e = await connectError(client.listProgramAccounts(request));
      expect([e.code, reasonOf(e)]).toEqual([code, reason]);
    }
    expect(node.seen).toHaveLength(0);
  });

  it("answers UPSTREAM_UNAVAILABLE when the node fails", async () => {
    const client = clientFor([chain(createProgramAccounts({ upstream }))]);
    const e = await connectError(client.listProgramAccounts({ programId: TOKEN, match: [`0:${USDC}`] }));
    expect([e.code, reasonOf(e)]).toEqual([Code.Unavailable, "UPSTREAM_UNAVAILABLE"]);
  });

  it("turns a page of the core into the response message and seed JSON names", async () => {
    const recorded = JSON.parse(
      readFileSync(
        new URL("../fixtures/solana/rpc/getAccountInfo_jsonParsed_token_account_slot140702417.json", import.meta.url),
        "utf8",
      ),
    );
    // Node JSON as parsed by JSON.parse (numbers, not kit's bigints): the mapping takes either.
    const parsed = toProgramAccountItem(
      "7UX2i7SucgLMQcfZ75s3VXmZZY4YRUyJN9X1RgfMoDUi",
      recorded.result.value as RpcAccount,
    )!;
    const raw = toProgramAccountItem("So11111111111111111111111111111111111111112", {
      lamports: 18446744073709551615n,
      owner: TOKEN,
      data: ["AQID", "base64"],
    })!;
    let asked: ProgramAccountsQuery | undefined;
    const programs: ProgramAccounts = {
      async list(query) {
        asked = query;
        return { programId: query.programId, items: [parsed, raw], nextCursor: query.cursor ? null : "next-page" };
      },
    };
    const client = clientFor([chain(programs)]);

    const first = await client.listProgramAccounts({ programId: TOKEN, size: 165n, match: [`0:${USDC}`], limit: 7 });
    expect(asked).toEqual({ programId: TOKEN, size: 165n, match: [`0:${USDC}`], limit: 7, cursor: "" });
    expect(first.nextCursor).toBe("next-page");
    expect(first.items[0].data?.format).toBe(DataFormat.PARSED);
    expect(first.items[0].data?.parsed?.info?.tokenAmount?.raw).toBe(36010000000n);
    expect(first.items[1]).toMatchObject({ lamports: 18446744073709551615n, space: 3n });
    expect(first.items[1].data).toMatchObject({ format: DataFormat.BASE64, base64: "AQID" });

    const json = toJson(ListProgramAccountsResponseSchema, first) as Record<string, any>;
    expect(json.nextCursor).toBe("next-page");
    expect(json.items[0].data.parsed.info.tokenAmount).toEqual({
      raw: "36010000000",
      decimals: 6,
      ui: 36010,
      uiString: "36010",
    });
    expect(json.items[0].data.format).toBe("DATA_FORMAT_PARSED");

    const last = await client.listProgramAccounts({ programId: TOKEN, match: [`0:${USDC}`], cursor: "next-page" });
    expect(last.nextCursor).toBeUndefined();
    expect("nextCursor" in (toJson(ListProgramAccountsResponseSchema, last) as object)).toBe(false);
  });
});
