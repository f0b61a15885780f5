/**
 * Fits the congestion profiles' distributions (src/traffic/mainnet-distribution.ts) to the project's
 * recorded mainnet data and draws them: `node packages/localnet/scripts/traffic-distribution.ts` prints the
 * fit and writes docs/localnet-traffic-distribution.svg (empirical CDF of the samples against the fitted
 * CDF, for compute-unit requests and for bids). The SVG is written here by hand: two step lines and two
 * curves on log axes need no plotting library.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { computeBudgetLimits } from "../src/chain/cost-model.ts";
import { isSimpleVoteTransaction } from "../src/chain/prioritization-fees.ts";
import {
  fitCdf,
  fitLogNormal,
  MAINNET_UNIT_LIMITS,
  MAINNET_UNIT_PRICES,
  type LogNormalFit,
} from "../src/traffic/mainnet-distribution.ts";
import { decodeTransaction } from "../src/wire/decode-transaction.ts";

const FIXTURES = new URL("../../../test/fixtures/solana/", import.meta.url);
const BLOCKS = ["blocks/get_block_base64_encoding.json"];
const TRANSACTIONS = [
  "rpc/getTransaction.json",
  "rpc/getTransaction_base64_slot369139986.json",
  "rpc/getTransaction_failed_Custom30_slot303573396.json",
  "rpc/getTransaction_failed_IncorrectProgramId_slot303576101.json",
  "rpc/getTransaction_v0_success_slot302649801.json",
];
const SLOT_PRICES = "rpc/getRecentPrioritizationFees_mainnet_slot338225766-338225915.json";

const read = (path: string) => {
  const json = JSON.parse(readFileSync(new URL(path, FIXTURES), "utf8"));
  return json.result ?? json;
};

/** The recorded samples: requests (0 = no SetComputeUnitLimit) of non-vote transactions, and slot prices. */
export function recordedSamples(): { requests: number[]; prices: number[] } {
  const wires: Uint8Array[] = [];
  for (const file of BLOCKS) {
    for (const entry of read(file).transactions) wires.push(Buffer.from(entry.transaction[0], "base64"));
  }
  for (const file of TRANSACTIONS) wires.push(Buffer.from(read(file).transaction[0], "base64"));
  const requests: number[] = [];
  for (const wire of wires) {
    const tx = decodeTransaction(new Uint8Array(wire));
    if (isSimpleVoteTransaction(tx)) continue;
    const explicit = tx.message.instructions.some(
      (ix) =>
        tx.message.staticKeys[ix.programIdIndex] === "ComputeBudget111111111111111111111111111111" && ix.data[0] === 2,
    );
    requests.push(explicit ? computeBudgetLimits(tx.message)!.unitLimit : 0);
  }
  const prices = (read(SLOT_PRICES) as { prioritizationFee: number }[]).map((f) => f.prioritizationFee);
  return { requests, prices };
}

/** The fit of each sample. */
export function fitRecorded(): { requests: LogNormalFit; prices: LogNormalFit } {
  const { requests, prices } = recordedSamples();
  return { requests: fitLogNormal(requests, (v) => v === 0), prices: fitLogNormal(prices, (v) => v === 0) };
}

function panel(
  x0: number,
  title: string,
  unit: string,
  samples: number[],
  fit: LogNormalFit,
  lo: number,
  hi: number,
  zeroLabel: string,
): string {
  const w = 420;
  const h = 260;
  const left = x0 + 50;
  const top = 40;
  const lx = (v: number) =>
    left + ((Math.log10(Math.max(v, lo)) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * (w - 70);
  const ly = (p: number) => top + (1 - p) * (h - 60);
  const sorted = [...samples].sort((a, b) => a - b);
  // Empirical CDF as steps; the special value (0) is drawn at the axis' left edge.
  let path = `M ${lx(lo).toFixed(1)} ${ly(0).toFixed(1)}`;
  sorted.forEach((v, i) => {
    const x = lx(v === 0 ? lo : v);
    path += ` L ${x.toFixed(1)} ${ly(i / sorted.length).toFixed(1)} L ${x.toFixed(1)} ${ly((i + 1) / sorted.length).toFixed(1)}`;
  });
  path += ` L ${lx(hi).toFixed(1)} ${ly(1).toFixed(1)}`;
  let curve = "";
  for (let k = 0; k <= 200; k++) {
    const v = lo * (hi / lo) ** (k / 200);
    curve += `${k === 0 ? "M" : "L"} ${lx(v).toFixed(1)} ${ly(fitCdf(fit, v)).toFixed(1)} `;
  }
  const ticks: string[] = [];
  for (let e = Math.ceil(Math.log10(lo)); e <= Math.log10(hi); e++) {
    const x = lx(10 ** e);
    ticks.push(
      `<line x1="${x}" y1="${ly(0)}" x2="${x}" y2="${ly(0) + 4}" stroke="#444"/><text x="${x}" y="${ly(0) + 16}" font-size="10" text-anchor="middle">1e${e}</text>`,
    );
  }
  for (const p of [0, 0.25, 0.5, 0.75, 1]) {
    ticks.push(
      `<text x="${left - 6}" y="${ly(p) + 3}" font-size="10" text-anchor="end">${p}</text><line x1="${left}" y1="${ly(p)}" x2="${lx(hi)}" y2="${ly(p)}" stroke="#eee"/>`,
    );
  }
  return `<g>
<text x="${left}" y="${top - 16}" font-size="13" font-weight="bold">${title}</text>
${ticks.join("\n")}
<line x1="${left}" y1="${ly(0)}" x2="${lx(hi)}" y2="${ly(0)}" stroke="#444"/>
<line x1="${left}" y1="${ly(0)}" x2="${left}" y2="${ly(1)}" stroke="#444"/>
<path d="${path}" fill="none" stroke="#1f77b4" stroke-width="2"/>
<path d="${curve}" fill="none" stroke="#d62728" stroke-width="2" stroke-dasharray="5 3"/>
<text x="${(left + lx(hi)) / 2}" y="${ly(0) + 32}" font-size="11" text-anchor="middle">${unit} (log; ${zeroLabel} drawn at the left edge)</text>
<text x="${left + 8}" y="${top + 8}" font-size="10">n = ${samples.length}; ${zeroLabel}: ${(fit.zeroShare * 100).toFixed(1)}%; log-normal median ${Math.round(fit.median).toLocaleString("en-US")}, sigma ${fit.sigma.toFixed(2)}</text>
</g>`;
}

/** The SVG of both fits. */
export function distributionSvg(): string {
  const { requests, prices } = recordedSamples();
  const fits = fitRecorded();
  return `<svg xmlns="http://www.w3.org/2000/svg" width="900" height="300" viewBox="0 0 900 300" font-family="sans-serif">
<title>Localnet congestion traffic: recorded mainnet compute-unit requests and bids against the fitted distributions</title>
<rect width="900" height="300" fill="white"/>
${panel(0, "Compute-unit requests (recorded non-vote transactions)", "CU requested", requests, fits.requests, 100, 2_000_000, "no SetComputeUnitLimit")}
${panel(450, "Bids (getRecentPrioritizationFees, 150 mainnet slots, 2025)", "micro-lamports per CU", prices, fits.prices, 1_000, 10_000_000, "unpriced")}
<text x="60" y="292" font-size="10" fill="#1f77b4">solid: recorded samples (empirical CDF)</text>
<text x="300" y="292" font-size="10" fill="#d62728">dashed: the fit the congestion profiles draw from (src/traffic/mainnet-distribution.ts)</text>
</svg>
`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const fits = fitRecorded();
  console.log(
    JSON.stringify(
      { fitted: fits, committed: { requests: MAINNET_UNIT_LIMITS, prices: MAINNET_UNIT_PRICES } },
      null,
      2,
    ),
  );
  const out = new URL("../../../docs/localnet-traffic-distribution.svg", import.meta.url);
  writeFileSync(out, distributionSvg());
  console.log(`wrote ${fileURLToPath(out)}`);
}
