/**
 * The command as a project's test script runs solana-test-validator: `npx @solgate/localnet --reset
 * --ledger DIR --account A FILE --bpf-program P P.so`, then the tests read the keypairs and the log from
 * DIR and use them with kit (the faucet's keypair pays a transfer; the loaded account is read; the
 * loaded program is called). Also: an existing ledger keeps its keys, `--reset` replaces them, PubSub
 * answers on the RPC port + 1, and a directory that cannot be written stops the start.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import {
  appendTransactionMessageInstructions,
  createKeyPairSignerFromBytes,
  createSolanaRpc,
  createSolanaRpcSubscriptions,
  createTransactionMessage,
  devnet,
  generateKeyPairSigner,
  getSignatureFromTransaction,
  lamports,
  pipe,
  sendAndConfirmTransactionFactory,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Address,
  type Instruction,
  type KeyPairSigner,
} from "@solana/kit";
import { getCreateAccountInstruction, getTransferSolInstruction } from "@solana-program/system";
import { getInitializeMint2Instruction } from "@solana-program/token";
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseJson, stringifyJson } from "../../src/rpc/json.ts";
import { splTokenElf } from "../loading/litesvm-programs.ts";

const REPO = fileURLToPath(new URL("../../../../", import.meta.url));
const BIN = fileURLToPath(new URL("../../bin/solgate-localnet.js", import.meta.url));
const USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const recordedUsdc = (
  parseJson(
    readFileSync(
      path.join(REPO, "test/fixtures/solana/rpc/getAccountInfo_USDC_mint_base64_slot239322946.json"),
      "utf8",
    ),
  ) as any
).result.value;

const work = mkdtempSync(path.join(tmpdir(), "localnet-drop-in-"));
const write = (name: string, text: string | Uint8Array) => {
  const file = path.join(work, name);
  writeFileSync(file, text);
  return file;
};

interface Running {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exit: Promise<number | null>;
  stop(): Promise<number | null>;
}

/** Runs `command args` in its own process group (npx and the shim below it end together). */
function run(command: string, args: string[]): Running {
  const child = spawn(command, args, { cwd: REPO, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout!.setEncoding("utf8").on("data", (t: string) => (stdout += t));
  child.stderr!.setEncoding("utf8").on("data", (t: string) => (stderr += t));
  const exit = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    exit,
    async stop() {
      if (child.exitCode === null) {
        try {
          process.kill(-child.pid!, "SIGTERM");
        } catch {}
      }
      return exit;
    },
  };
}

/**
 * Polls the ledger's log until it names the PubSub URL, its last line, and (given `previous`, a former
 * run's) not the former run's RPC URL (a free port each run).
 */
async function logged(
  dir: string,
  running: Running,
  previous?: Record<string, string>,
): Promise<Record<string, string>> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const file = path.join(dir, "validator.log");
    const text = existsSync(file) ? readFileSync(file, "utf8") : "";
    if (text.includes("WebSocket PubSub URL: ") && !(previous && text.includes(previous["JSON RPC URL"]!))) {
      const fields: Record<string, string> = {};
      for (const match of text.matchAll(/\] ([A-Za-z ]+): (\S+)$/gm)) fields[match[1]!] = match[2]!;
      fields.versionLine = /\] agave-validator (\S+)/.exec(text)?.[1] ?? "";
      fields.featureSetHex =
        /agave-validator \S+ \(src:[0-9a-f]{8}; feat:([0-9a-f]{8}), client:Agave\)/.exec(text)?.[1] ?? "";
      fields.shredVersion = /solana_core::validator\] shred version: (\d+), hard forks: /.exec(text)?.[1] ?? "";
      fields.contactShredVersion =
        /solana_core::validator\] ContactInfo \{ .*shred_version: (\d+),/.exec(text)?.[1] ?? "";
      fields.rpcBound = /solana_rpc::rpc_service\] rpc bound to (\S+)$/m.exec(text)?.[1] ?? "";
      return fields;
    }
    if (running.child.exitCode !== null || Date.now() > deadline)
      throw new Error(`no ready log in ${dir}; stderr: ${running.stderr()}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function rpcCall(url: string, method: string, params: unknown[] = []): Promise<any> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return ((await response.json()) as any).result;
}

/** A solana-keygen keypair (seed, then public key). */
function keypairBytes(): Uint8Array {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const seed = privateKey.export({ format: "der", type: "pkcs8" }).subarray(-32);
  const pub = publicKey.export({ format: "der", type: "spki" }).subarray(-32);
  return Uint8Array.from([...seed, ...pub]);
}

const keypair = (dir: string, name: string) =>
  createKeyPairSignerFromBytes(Uint8Array.from(JSON.parse(readFileSync(path.join(dir, name), "utf8"))));

describe("npx @solgate/localnet in place of solana-test-validator", () => {
  const ledger = path.join(work, "test-ledger");
  const accountFile = write(
    "usdc.json",
    stringifyJson({
      pubkey: USDC,
      account: {
        lamports: recordedUsdc.lamports,
        data: recordedUsdc.data,
        owner: recordedUsdc.owner,
        executable: false,
        rentEpoch: recordedUsdc.rentEpoch,
        space: recordedUsdc.space,
      },
    }),
  );
  const programFile = write("token.so", splTokenElf());
  let programKeypairFile: string;
  let programId: Address;
  let validator: Running;
  let log: Record<string, string>;

  beforeAll(async () => {
    // The program's address as solana-test-validator also takes it: a keypair file.
    const bytes = keypairBytes();
    programId = (await createKeyPairSignerFromBytes(bytes)).address;
    programKeypairFile = write("program-keypair.json", JSON.stringify([...bytes]));
    validator = run("npx", [
      "@solgate/localnet",
      "--reset",
      "--ledger",
      ledger,
      "--account",
      USDC,
      accountFile,
      "--bpf-program",
      programKeypairFile,
      programFile,
      "--rpc-port",
      "0",
      "--quiet",
    ]);
    log = await logged(ledger, validator);
  }, 90_000);
  afterAll(async () => {
    await validator?.stop();
  });

  it("writes the keypairs and the log tools read", async () => {
    const url = log["JSON RPC URL"]!;
    const identity = await keypair(ledger, "validator-keypair.json");
    const vote = await keypair(ledger, "vote-account-keypair.json");
    const faucet = await keypair(ledger, "faucet-keypair.json");
    expect(log.Identity).toBe(identity.address);
    expect((await rpcCall(url, "getIdentity")).identity).toBe(identity.address);
    const votes = await rpcCall(url, "getVoteAccounts");
    expect([...votes.current, ...votes.delinquent].map((v: any) => [v.nodePubkey, v.votePubkey])).toEqual([
      [identity.address, vote.address],
    ]);
    expect(log["Genesis Hash"]).toBe(await rpcCall(url, "getGenesisHash"));
    const versionInfo = await rpcCall(url, "getVersion");
    const version = versionInfo["solana-core"];
    expect(log.versionLine).toBe(version);
    // agave 4.4's Version::as_detailed_string writes the feature set as 8 hex digits (3.0: decimal).
    expect(Number.parseInt(log.featureSetHex!, 16)).toBe(versionInfo["feature-set"]);
    expect(log.Version).toBe(version);
    expect(log.Faucet).toBe(faucet.address);
    // agave's own lines (core's validator.rs, rpc_service.rs), agreeing with getClusterNodes.
    expect(log["identity pubkey"]).toBe(identity.address);
    expect(log["genesis hash"]).toBe(log["Genesis Hash"]);
    const [node] = await rpcCall(url, "getClusterNodes");
    expect(Number(log.shredVersion)).toBe(node.shredVersion);
    expect(Number(log.contactShredVersion)).toBe(node.shredVersion);
    expect(log["local gossip address"]).toBe(node.gossip);
    expect(log.rpcBound).toBe(new URL(url).host);
    expect(validator.stdout()).toBe(""); // --quiet
  });

  it("lets the faucet's keypair pay a transfer, sent and confirmed with kit over the logged PubSub URL", async () => {
    const rpc = createSolanaRpc(devnet(log["JSON RPC URL"]!));
    const rpcSubscriptions = createSolanaRpcSubscriptions(devnet(log["WebSocket PubSub URL"]!));
    const faucet = await keypair(ledger, "faucet-keypair.json");
    const recipient = await generateKeyPairSigner();
    await send(rpc, rpcSubscriptions, faucet, [
      getTransferSolInstruction({ source: faucet, destination: recipient.address, amount: lamports(2_000_000_000n) }),
    ]);
    const { value } = await rpc.getBalance(recipient.address, { commitment: "confirmed" }).send();
    expect(value).toBe(2_000_000_000n);
  });

  it("serves the --account file byte for byte", async () => {
    const url = log["JSON RPC URL"]!;
    const value = (await rpcCall(url, "getAccountInfo", [USDC, { encoding: "base64" }])).value;
    expect(value.data).toEqual(recordedUsdc.data);
    expect(value.owner).toBe(recordedUsdc.owner);
    expect((await rpcCall(url, "getAccountInfo", [USDC, { encoding: "jsonParsed" }])).value.data.parsed.type).toBe(
      "mint",
    );
  });

  it("runs the --bpf-program, deployed at its keypair file's address without an upgrade authority", async () => {
    const rpc = createSolanaRpc(devnet(log["JSON RPC URL"]!));
    const rpcSubscriptions = createSolanaRpcSubscriptions(devnet(log["WebSocket PubSub URL"]!));
    const faucet = await keypair(ledger, "faucet-keypair.json");
    const mint = await generateKeyPairSigner();
    const rent = await rpc.getMinimumBalanceForRentExemption(82n).send();
    await send(rpc, rpcSubscriptions, faucet, [
      getCreateAccountInstruction({
        payer: faucet,
        newAccount: mint,
        lamports: rent,
        space: 82n,
        programAddress: programId,
      }),
      getInitializeMint2Instruction(
        { mint: mint.address, decimals: 7, mintAuthority: faucet.address },
        { programAddress: programId },
      ),
    ]);
    const { value } = await rpc.getAccountInfo(mint.address, { encoding: "base64", commitment: "confirmed" }).send();
    const state = Buffer.from(value!.data[0], "base64");
    expect(value!.owner).toBe(programId);
    expect(state[44]).toBe(7); // decimals
    expect(state[45]).toBe(1); // initialized
    const programdata = (await rpcCall(log["JSON RPC URL"]!, "getAccountInfo", [programId, { encoding: "jsonParsed" }]))
      .value.data.parsed.info.programData;
    const info = (await rpcCall(log["JSON RPC URL"]!, "getAccountInfo", [programdata, { encoding: "jsonParsed" }]))
      .value.data.parsed.info;
    expect(info.authority).toBeNull();
  });

  it("keeps the identity and the faucet of an existing ledger; --reset replaces them", async () => {
    await validator.stop();
    const before = { identity: log.Identity, faucet: log.Faucet, vote: log["Vote Account"] };
    // With two more of solana-test-validator's flags, checked through the RPC.
    const again = run(process.execPath, [
      BIN,
      "--ledger",
      ledger,
      "--rpc-port",
      "0",
      "--quiet",
      "--slots-per-epoch",
      "64",
      "--faucet-sol",
      "12.5",
    ]);
    try {
      const kept = await logged(ledger, again, log);
      expect({ identity: kept.Identity, faucet: kept.Faucet, vote: kept["Vote Account"] }).toEqual(before);
      expect((await rpcCall(kept["JSON RPC URL"]!, "getIdentity")).identity).toBe(before.identity);
      const faucetAccount = await rpcCall(kept["JSON RPC URL"]!, "getBalance", [before.faucet]);
      expect(faucetAccount.value).toBe(12_500_000_000);
      expect(await rpcCall(kept["JSON RPC URL"]!, "getEpochSchedule")).toMatchObject({
        slotsPerEpoch: 64,
        leaderScheduleSlotOffset: 64,
        warmup: false,
      });
    } finally {
      await again.stop();
    }
    const keptLog = readFileSync(path.join(ledger, "validator.log"), "utf8");
    const reset = run(process.execPath, [BIN, "--reset", "--ledger", ledger, "--rpc-port", "0", "--quiet"]);
    try {
      const fresh = await logged(ledger, reset, { "JSON RPC URL": /JSON RPC URL: (\S+)/.exec(keptLog)![1]! });
      expect(fresh.Identity).not.toBe(before.identity);
      expect(fresh.Faucet).not.toBe(before.faucet);
      expect((await keypair(ledger, "validator-keypair.json")).address).toBe(fresh.Identity);
    } finally {
      await reset.stop();
    }
  }, 90_000);
});

async function send(
  rpc: ReturnType<typeof createSolanaRpc<ReturnType<typeof devnet>>>,
  rpcSubscriptions: ReturnType<typeof createSolanaRpcSubscriptions<ReturnType<typeof devnet>>>,
  payer: KeyPairSigner,
  instructions: Instruction[],
): Promise<string> {
  const { value: blockhash } = await rpc.getLatestBlockhash({ commitment: "confirmed" }).send();
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(payer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(blockhash, m),
    (m) => appendTransactionMessageInstructions(instructions, m),
  );
  const tx = await signTransactionMessageWithSigners(message);
  await sendAndConfirmTransactionFactory({ rpc, rpcSubscriptions })(tx as never, { commitment: "confirmed" });
  return getSignatureFromTransaction(tx);
}

/** Two free consecutive ports (PORT for JSON-RPC, PORT + 1 for PubSub). */
async function freePortPair(): Promise<number> {
  const listen = (port: number) =>
    new Promise<net.Server | null>((resolve) => {
      const server = net.createServer();
      server.once("error", () => resolve(null));
      server.listen(port, "127.0.0.1", () => resolve(server));
    });
  for (let attempt = 0; attempt < 20; attempt++) {
    const first = await listen(0);
    const port = (first!.address() as net.AddressInfo).port;
    const second = port < 65535 ? await listen(port + 1) : null;
    await new Promise((r) => first!.close(r));
    if (second) {
      await new Promise((r) => second.close(r));
      return port;
    }
  }
  throw new Error("no two free consecutive ports");
}

describe("the command's ports and refusals", () => {
  it("serves PubSub on the RPC port + 1, as agave does", async () => {
    const port = await freePortPair();
    const dir = path.join(work, "ports-ledger");
    const running = run(process.execPath, [BIN, "--ledger", dir, "--rpc-port", String(port), "--quiet"]);
    try {
      const log = await logged(dir, running);
      expect(log["JSON RPC URL"]).toBe(`http://127.0.0.1:${port}`);
      expect(log["WebSocket PubSub URL"]).toBe(`ws://127.0.0.1:${port + 1}`);
      const ws = new WebSocket(`ws://127.0.0.1:${port + 1}`);
      const notification = await new Promise<any>((resolve, reject) => {
        ws.once("error", reject);
        ws.on("message", (data) => {
          const message = JSON.parse(String(data));
          if (message.method === "slotNotification") resolve(message.params.result);
        });
        ws.once("open", () => ws.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "slotSubscribe" })));
      });
      ws.close();
      expect(notification.slot).toEqual(expect.any(Number));
      // The PubSub port takes WebSocket upgrades only.
      expect((await fetch(`http://127.0.0.1:${port + 1}`)).status).toBe(426);
    } finally {
      await running.stop();
    }
  }, 60_000);

  it("stops with one line naming a ledger directory that cannot be written (exit code 2)", async () => {
    const blocker = write("a-file", "not a directory");
    const dir = path.join(blocker, "ledger");
    const running = run(process.execPath, [BIN, "--ledger", dir, "--rpc-port", "0"]);
    expect(await running.exit).toBe(2);
    expect(running.stderr()).toBe(`solgate-localnet: ledger directory ${dir} cannot be written (ENOTDIR)\n`);
  }, 60_000);

  it("refuses an unknown flag and an unsupported one with one line and exit code 2", async () => {
    for (const [flag, line] of [
      [
        "--no-such-flag",
        "solgate-localnet: unknown flag --no-such-flag (see --help for the flags the localnet takes)\n",
      ],
      [
        "--warp-slot",
        "solgate-localnet: --warp-slot is not supported: the chain starts at LOCALNET_START_SLOT instead\n",
      ],
    ] as const) {
      const running = run(process.execPath, [BIN, flag, "5"]);
      expect(await running.exit).toBe(2);
      expect(running.stderr()).toBe(line);
    }
  }, 60_000);
});
