/**
 * Node errors named once: each JSON-RPC error a node sends (recorded ones where we have them, agave's
 * wording otherwise) goes through the real upstream over HTTP and comes out as one `NodeError` kind.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createUpstream } from "../../src/upstream/upstream.ts";
import type { Upstream } from "../../src/upstream/upstream.ts";
import { nodeErrorOf } from "../../src/upstream/node-errors.ts";
import type { NodeErrorKind } from "../../src/upstream/node-errors.ts";
import { fixtureText, startFaultServer } from "./fault-server.ts";
import type { Behaviour, FaultServer } from "./fault-server.ts";

const servers: FaultServer[] = [];
const upstreams: Upstream[] = [];

afterEach(async () => {
  await Promise.all(upstreams.splice(0).map((u) => u.close()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/**
 * The error a call gets from a node answering `behaviour`: a kit call, or a DAS call for codes kit does
 * not know (kit cannot build an error for those; the DAS client keeps them).
 */
async function errorFrom(behaviour: Behaviour, via: "rpc" | "das" = "rpc"): Promise<unknown> {
  const node = await startFaultServer(behaviour);
  servers.push(node);
  const upstream = createUpstream({ chain: "test", rpcUrls: [node.url], timeoutMs: 2000, maxRetries: 0 });
  upstreams.push(upstream);
  const call = via === "rpc" ? upstream.rpc.getEpochInfo().send() : upstream.das.call("getAsset", { id: "x" });
  return call.then(
    () => expect.unreachable("the call succeeded"),
    (e: unknown) => e,
  );
}

function jsonRpcError(code: number, message: string, data?: unknown): Behaviour {
  return {
    kind: "json",
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, error: { code, message, ...(data === undefined ? {} : { data }) } }),
  };
}

const SIMULATION = { accounts: null, logs: [], unitsConsumed: 0, returnData: null };
/** Recorded with its provenance around it: the node's bytes are `verbatim_text`. */
const RECORDED_BLOCKHASH_NOT_FOUND: Behaviour = {
  kind: "json",
  body: JSON.parse(fixtureText("sendTransaction_-32002_BlockhashNotFound.json")).verbatim_text,
};

describe("nodeErrorOf", () => {
  const cases: [string, Behaviour, NodeErrorKind, ("rpc" | "das")?][] = [
    [
      "a recorded preflight failure (-32002)",
      { kind: "fixture", name: "sendTransaction_-32002_preflight_Custom1_insufficient_lamports.json" },
      "preflight-failed",
    ],
    ["a recorded unknown blockhash (-32002 BlockhashNotFound)", RECORDED_BLOCKHASH_NOT_FOUND, "blockhash-not-found"],
    [
      "an already processed transaction (-32002 AlreadyProcessed)",
      jsonRpcError(-32002, "Transaction simulation failed: This transaction has already been processed", {
        ...SIMULATION,
        err: "AlreadyProcessed",
      }),
      "already-processed",
    ],
    [
      "a signature verification failure (-32003)",
      jsonRpcError(-32003, "Transaction signature verification failure"),
      "transaction-rejected",
    ],
    [
      "a precompile failure (-32006)",
      jsonRpcError(-32006, "Transaction precompile verification failure InvalidAccountIndex"),
      "transaction-rejected",
    ],
    [
      "a signature count mismatch (-32013)",
      jsonRpcError(-32013, "Transaction signature length mismatch"),
      "transaction-rejected",
    ],
    [
      "an unsupported version (-32015)",
      jsonRpcError(-32015, "Transaction version (0) is not supported by the requesting client."),
      "transaction-rejected",
    ],
    [
      "a skipped slot (-32007)",
      jsonRpcError(-32007, "Slot 5 was skipped, or missing due to ledger jump to recent snapshot"),
      "slot-skipped",
    ],
    [
      "a slot skipped in long-term storage (-32009)",
      jsonRpcError(-32009, "Slot 5 was skipped, or missing in long-term storage"),
      "slot-skipped",
    ],
    [
      "a block cleaned up (-32001)",
      jsonRpcError(-32001, "Block 5 cleaned up, does not exist on node. First available block: 9"),
      "slot-skipped",
    ],
    [
      "a block not available yet (-32004)",
      jsonRpcError(-32004, "Block not available for slot 5"),
      "block-not-available",
    ],
    [
      "a key excluded from the secondary index (-32010)",
      jsonRpcError(
        -32010,
        "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA excluded from account secondary indexes; this RPC method unavailable for key",
      ),
      "scan-refused",
    ],
    [
      "a scan error (-32012)",
      jsonRpcError(-32012, "scan aborted: the accumulated scan results exceeded the limit"),
      "scan-refused",
    ],
    [
      "a provider's rate limit in a JSON-RPC body (-32429)",
      jsonRpcError(-32429, "Too many requests for a specific RPC call"),
      "rate-limited",
      "das",
    ],
    [
      "recorded invalid params (-32602)",
      { kind: "fixture", name: "error_-32602_invalid_param_WrongSize.json" },
      "invalid-params",
    ],
    ["an unknown method (-32601)", jsonRpcError(-32601, "Method not found"), "method-not-found"],
    [
      "a code nobody named (DAS's -32000)",
      jsonRpcError(-32000, "Database Error: RecordNotFound Error: Asset Not Found"),
      "other",
      "das",
    ],
  ];

  it.each(cases)("names %s", async (_, behaviour, kind, via) => {
    expect(nodeErrorOf(await errorFrom(behaviour, via))?.kind).toBe(kind);
  });

  it("keeps the node's code and message, and a preflight failure's error, logs and units", async () => {
    const error = nodeErrorOf(
      await errorFrom({ kind: "fixture", name: "sendTransaction_-32002_preflight_Custom1_insufficient_lamports.json" }),
    );
    expect(error).toMatchObject({
      kind: "preflight-failed",
      code: -32002,
      err: { InstructionError: [0n, { Custom: 1n }] },
    });
    if (error?.kind !== "preflight-failed") throw new Error("unreachable");
    expect(error.message).toMatch(/^Transaction simulation failed/);
    expect(error.logs.length).toBeGreaterThan(0);
    expect(error.unitsConsumed === undefined || typeof error.unitsConsumed === "bigint").toBe(true);
  });

  it("names an already processed transaction from the message alone, as some providers word it", async () => {
    expect(nodeErrorOf(await errorFrom(jsonRpcError(-32002, "Transaction has already been processed")))?.kind).toBe(
      "already-processed",
    );
  });

  it("is undefined for what is not a node's JSON-RPC error", async () => {
    expect(nodeErrorOf(await errorFrom({ kind: "status", status: 503 }))).toBeUndefined();
    expect(nodeErrorOf(new Error("a bug"))).toBeUndefined();
  });
});
