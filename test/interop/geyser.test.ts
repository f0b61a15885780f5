/**
 * Geyser: the official Rust Yellowstone client (yellowstone-grpc-client, tonic) against the embedded
 * localnet's Geyser server, with an x-token and background traffic: the unary calls, then slots, block
 * metas, transactions, transaction statuses and account writes at confirmed, and a ping on the stream.
 * What it saw is checked against the localnet's JSON-RPC.
 */
import { startLocalnet, type LocalnetHandle } from "@solgate/localnet";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { run } from "./harness/processes.ts";
import type { ProcessResult } from "./harness/processes.ts";

const BINARY = "test/interop/geyser-rust/target/debug/solgate-geyser-interop";

async function rpc(url: string, method: string, params: unknown[]): Promise<any> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return ((await response.json()) as { result: unknown }).result;
}

describe("Geyser: the Rust Yellowstone client (yellowstone-grpc-client)", () => {
  let build: ProcessResult;
  let localnet: LocalnetHandle;
  beforeAll(async () => {
    build = await run("bash", ["test/interop/build-geyser-rust.sh"], { timeoutMs: 840_000 });
    console.log(`geyser rust: build took ${build.ms} ms`);
    localnet = await startLocalnet({ slotMs: 100, traffic: true, geyser: { token: "interop" } });
  });
  afterAll(async () => {
    await localnet?.stop();
  });

  it("builds", () => {
    expect(build.code, `${build.stdout}\n${build.stderr}`).toBe(0);
  });

  it("streams slots, transactions and accounts, and answers the unary calls", async () => {
    expect(build.code, "the build failed").toBe(0);
    const result = await run(BINARY, [localnet.geyserUrl!, "interop"], { timeoutMs: 60_000 });
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
    const lines = new Map(
      result.stdout
        .trim()
        .split("\n")
        .map((line) => {
          const [kind, ...rest] = line.split(" ");
          return [kind!, rest] as const;
        }),
    );
    expect(JSON.parse(lines.get("version")!.join(" ")).version.proto).toBe("12.7.0");
    expect(lines.get("pong")).toEqual(["9"]);
    expect(lines.get("blockhash")![2]).toBe("true");
    expect(lines.get("stream-pong")).toEqual(["42"]);
    for (const kind of ["slot", "block_meta", "transaction", "transaction_status", "account"]) {
      expect(lines.has(kind), `no ${kind} in\n${result.stdout}`).toBe(true);
    }
    // The transaction it saw is the JSON-RPC's, in the same slot.
    const [slot, signature, filters] = lines.get("transaction")!;
    expect(filters).toBe("t");
    const tx = await rpc(localnet.rpcUrl, "getTransaction", [
      signature,
      { commitment: "confirmed", maxSupportedTransactionVersion: 0 },
    ]);
    expect(tx.slot).toBe(Number(slot));
    const [metaSlot, blockhash] = lines.get("block_meta")!;
    const block = await rpc(localnet.rpcUrl, "getBlock", [
      Number(metaSlot),
      { commitment: "confirmed", transactionDetails: "none", rewards: false },
    ]);
    expect(block.blockhash).toBe(blockhash);
    expect(lines.get("account")![3]).toBe("a");
  });
});
