/**
 * Shared test helpers: a localnet started through the launcher (port 0, fast slots), kit clients
 * for it, raw JSON-RPC posting, and transaction builders.
 */
import {
  appendTransactionMessageInstructions,
  createSolanaRpc,
  devnet,
  createSolanaRpcSubscriptions,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Address,
  type Instruction,
  type KeyPairSigner,
} from "@solana/kit";
import { startLocalnet, type LocalnetHandle, type LocalnetOptions } from "../src/launcher.ts";
import { parseJson, stringifyJson } from "../src/rpc/json.ts";

/** A launched localnet with kit clients. */
export interface TestLocalnet {
  handle: LocalnetHandle;
  rpc: ReturnType<typeof createSolanaRpc<ReturnType<typeof devnet>>>;
  subscriptions: ReturnType<typeof createSolanaRpcSubscriptions<ReturnType<typeof devnet>>>;
  /** Posts a raw body; returns HTTP status, the text, and parsed JSON (null when empty, undefined when not JSON). */
  post(
    body: unknown,
    init?: { raw?: boolean; signal?: AbortSignal },
  ): Promise<{ status: number; json: any; text: string }>;
  /** One JSON-RPC call; returns the whole response object. */
  call(method: string, params?: unknown[]): Promise<any>;
  stop(): Promise<void>;
}

/** Starts a localnet with a fast clock (10 ms slots unless told otherwise). */
export async function startTestLocalnet(options: LocalnetOptions = {}): Promise<TestLocalnet> {
  const handle = await startLocalnet({ slotMs: 10, ...options });
  const post: TestLocalnet["post"] = async (body, init = {}) => {
    const response = await fetch(handle.rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: init.raw ? (body as string) : stringifyJson(body),
      signal: init.signal,
    });
    const text = await response.text();
    let json: unknown = null;
    try {
      json = text.length > 0 ? parseJson(text) : null;
    } catch {
      json = undefined;
    }
    return { status: response.status, json, text };
  };
  let nextId = 1;
  return {
    handle,
    rpc: createSolanaRpc(devnet(handle.rpcUrl)),
    subscriptions: createSolanaRpcSubscriptions(devnet(handle.wsUrl)),
    post,
    async call(method, params = []) {
      return (await post({ jsonrpc: "2.0", id: nextId++, method, params })).json;
    },
    async stop() {
      await handle.stop();
    },
  };
}

/** Builds and signs a v0 (or legacy) transaction; returns it base64-encoded with its signature. */
export async function signedTransaction(
  payer: KeyPairSigner,
  instructions: Instruction[],
  blockhash: { blockhash: string; lastValidBlockHeight: bigint },
  version: 0 | "legacy" = 0,
): Promise<{ base64: string; signature: string }> {
  const message = pipe(
    createTransactionMessage({ version }),
    (m) => setTransactionMessageFeePayerSigner(payer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(blockhash as never, m),
    (m) => appendTransactionMessageInstructions(instructions, m),
  );
  const tx = await signTransactionMessageWithSigners(message);
  const base64 = getBase64EncodedWireTransaction(tx);
  const signature = Object.values(tx.signatures)[0]!;
  const { default: bs58 } = await import("bs58");
  return { base64, signature: bs58.encode(signature!) };
}

/** Polls until `predicate` returns a truthy value (or throws after `timeoutMs`). */
export async function waitFor<T>(
  what: string,
  fn: () => Promise<T | undefined | null | false>,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A fresh signer funded by an airdrop that has landed (confirmed). */
export async function fundedSigner(net: TestLocalnet, lamports = 10_000_000_000n): Promise<KeyPairSigner> {
  const signer = await generateKeyPairSigner();
  const signature = (await net.call("requestAirdrop", [signer.address, lamports])).result as string;
  await waitFor("airdrop", async () => {
    const status = (await net.call("getSignatureStatuses", [[signature]])).result.value[0];
    return status && status.confirmationStatus !== "processed" ? status : null;
  });
  return signer;
}

/** Lamports of an address at processed commitment. */
export async function balanceOf(net: TestLocalnet, address: Address | string): Promise<bigint> {
  const { value } = await net.rpc.getBalance(address as Address, { commitment: "processed" }).send();
  return value;
}
