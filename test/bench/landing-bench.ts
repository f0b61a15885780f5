/**
 * Landing bench (issue 30): the share of sends that land and the slots they take, for one path against
 * every path at once (src/upstream/send-paths.ts), with and without a tip, under per-path drop mixes and
 * under the `congested` traffic profile. Every figure in one run, against a real localnet (a child
 * process) with its RPC and its extra send ports dropping at set rates.
 *
 *   node test/bench/landing-bench.ts [--n 60]
 *
 * Slots to land: the landed slot minus the processed slot read just before the batch was sent.
 * The sends go through Solgate's transactions core in this process (not a server on a port): the
 * figures compare paths, and every scenario runs the same code but for its paths.
 */
import { address, generateKeyPairSigner } from "@solana/kit";
import type { Address } from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import type { LocalnetOptions } from "@solgate/localnet";
import { createTransactions } from "../../src/transactions/transactions.ts";
import { createSendPaths } from "../../src/upstream/send-paths.ts";
import type { SendPathConfig } from "../../src/upstream/send-paths.ts";
import { startChainFixture, transferTransaction } from "../transactions/chain-fixture.ts";
import type { ChainFixture } from "../transactions/chain-fixture.ts";

const argN = process.argv.indexOf("--n");
const N = argN > 0 ? Number(process.argv[argN + 1]) : 60;
const TIP_LAMPORTS = 10_000n;

interface Figures {
  name: string;
  landed: number;
  sent: number;
  medianSlots: number | undefined;
}

async function tipAccounts(blockEngineUrl: string): Promise<Address[]> {
  const response = await fetch(`${blockEngineUrl}/bundles`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "getTipAccounts", params: [] }),
  });
  const body = (await response.json()) as { result: string[] };
  return body.result.map((a) => address(a));
}

function median(values: number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

/** Sends N transfers through one configuration and measures them. */
async function scenario(
  chain: ChainFixture,
  name: string,
  setup: { rpcDropRate: number; portDropRates: number[]; paths: SendPathConfig[]; tip: boolean; tips: Address[] },
): Promise<Figures> {
  await chain.localnet.control({ dropRate: setup.rpcDropRate });
  for (const [i, rate] of setup.portDropRates.entries()) await chain.localnet.setSendPathDropRate(i, rate);
  const sendPaths = setup.paths.length === 0 ? undefined : createSendPaths({ paths: setup.paths });
  const transactions = createTransactions({
    upstream: chain.upstream,
    ...(sendPaths === undefined ? {} : { sendPaths }),
    pollIntervalMs: 100,
    confirmTimeoutMs: 120_000,
  });
  transactions.start();
  try {
    const payer = await chain.funded(10);
    const blockhash = await chain.latestBlockhash();
    const wires = await Promise.all(
      Array.from({ length: N }, async (_, i) => {
        const extra = setup.tip
          ? [
              getTransferSolInstruction({
                source: payer,
                destination: setup.tips[i % setup.tips.length] as Address,
                amount: TIP_LAMPORTS,
              }),
            ]
          : [];
        return transferTransaction({
          payer,
          to: (await generateKeyPairSigner()).address,
          lamports: 1_000_000n + BigInt(i),
          blockhash,
          budget: { units: 2000, microLamports: 1n },
          extra,
        });
      }),
    );
    const startSlot = await chain.upstream.rpc.getSlot({ commitment: "processed" }).send();
    const outcomes = await Promise.all(wires.map(({ wire }) => transactions.send({ wire }).catch(() => undefined)));
    const slots: number[] = [];
    let landed = 0;
    for (const o of outcomes) {
      if (o === undefined || (o.state !== "confirmed" && o.state !== "finalized")) continue;
      landed++;
      if (o.slot !== undefined) slots.push(Number(o.slot - startSlot));
    }
    return { name, landed, sent: N, medianSlots: median(slots) };
  } finally {
    transactions.stop();
  }
}

async function run(options: LocalnetOptions, label: string, figures: Figures[]): Promise<void> {
  const chain = await startChainFixture({ slotMs: 100, sendPorts: [{ dropRate: 0 }, { dropRate: 0 }], ...options });
  try {
    const tips = await tipAccounts(chain.localnet.blockEngineUrl);
    const [a, b] = chain.localnet.sendUrls as [string, string];
    const all: SendPathConfig[] = [
      { kind: "rpc", url: a },
      { kind: "rpc", url: b },
      { kind: "jito", url: chain.localnet.blockEngineUrl },
    ];
    for (const tip of [false, true]) {
      const t = tip ? " +tip" : "";
      // The mix: the RPC dropping 90%, one path 50%, one 90%, the block engine (its node send).
      figures.push(
        await scenario(chain, `${label} one path (drops 90%)${t}`, {
          rpcDropRate: 0.9,
          portDropRates: [0.5, 0.9],
          paths: [],
          tip,
          tips,
        }),
      );
      figures.push(
        await scenario(chain, `${label} one path (drops 50%)${t}`, {
          rpcDropRate: 0.5,
          portDropRates: [0.5, 0.9],
          paths: [],
          tip,
          tips,
        }),
      );
      figures.push(
        await scenario(chain, `${label} all paths (90/50/90 + engine)${t}`, {
          rpcDropRate: 0.9,
          portDropRates: [0.5, 0.9],
          paths: all,
          tip,
          tips,
        }),
      );
      figures.push(
        await scenario(chain, `${label} all paths (50/50/50 + engine)${t}`, {
          rpcDropRate: 0.5,
          portDropRates: [0.5, 0.5],
          paths: all,
          tip,
          tips,
        }),
      );
    }
  } finally {
    await chain.stop();
  }
}

const figures: Figures[] = [];
await run({ traffic: false }, "calm", figures);
await run({ traffic: { profile: "congested" } }, "congested", figures);

console.log(`landing bench: ${N} transfers per row, 100 ms slots, rebroadcast every 2 s`);
console.log("| scenario | landed | median slots to land |");
console.log("| --- | --- | --- |");
for (const f of figures) {
  console.log(`| ${f.name} | ${((100 * f.landed) / f.sent).toFixed(1)}% | ${f.medianSlots ?? "-"} |`);
}
const fanOut = figures.filter((f) => f.name.includes("all paths"));
const single = figures.filter((f) => f.name.includes("one path"));
const allLand = fanOut.every((f) => f.landed / f.sent >= 0.99);
console.log(`target: with all paths on, >= 99% land wherever a path drops <= 50%: ${allLand ? "MET" : "NOT MET"}`);
let mediansOk = true;
for (const prefix of ["calm", "congested"]) {
  for (const t of ["", " +tip"]) {
    const best = Math.min(
      ...single
        .filter((f) => f.name.startsWith(prefix) && f.name.endsWith(t === "" ? ")" : t))
        .map((f) => f.medianSlots ?? Number.POSITIVE_INFINITY),
    );
    for (const f of fanOut.filter((x) => x.name.startsWith(prefix) && x.name.endsWith(t === "" ? ")" : t))) {
      if ((f.medianSlots ?? Number.POSITIVE_INFINITY) > best) mediansOk = false;
    }
  }
}
console.log(`target: median slots to land with fan-out <= the best single path's: ${mediansOk ? "MET" : "NOT MET"}`);
console.log(
  "target: 0 partial bundles over 1,000 (Solgate's SendBundle): NOT MEASURED (SendBundle not built on this branch)",
);
