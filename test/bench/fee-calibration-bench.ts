/**
 * Calibration bench for landing odds (`npx node test/bench/fee-calibration-bench.ts`), issue 27 item 5.
 *
 * For each traffic profile (BENCH_PROFILES, default calm,busy,congested,storm: LOCALNET_TRAFFIC of the
 * localnet), it starts the localnet with that traffic and Solgate as a separate process (src/main.ts, pointed
 * at the localnet), then sends BENCH_SENDS transactions (default 2,000) through Solgate's REST API, signed by
 * keys the bench holds (funded by airdrop). Before each batch it asks EstimateFees for its draft and sends at:
 * - a quoted price: `recommended`, or one of the four levels, with the odds Solgate quoted for it;
 * - a price below `recommended` (25-100% of it, no odds): what cheaper fees would have done, for the hindsight fee;
 * - a price between two levels, with the odds linearly interpolated between theirs (marked as such);
 * - what users take instead: p50, p75 or max of `getRecentPrioritizationFees` over 150 slots for the same
 *   accounts (no odds: only their landed share and price are reported).
 * A send "lands within k" when its slot is at most k after the chain's confirmed slot read with its quote
 * (before the batch is signed and posted; the slots the odds speak of). The landed shares are also printed
 * counting from the confirmed slot read again after signing, just before posting ("of the send": the frame
 * Solgate's own tracking uses, from its last read of the confirmed slot when the send reaches it).
 * The first BENCH_WARMUP sends (default 300) let Solgate's correction learn and are not scored.
 *
 * Per profile it prints a reliability table (quoted-odds bucket -> observed landing share, counts), the Brier
 * score, the landed share and fee of sends at `recommended` against the cheapest fee that landed >= 90% in
 * hindsight, the same for the percentile baselines, and whether each of the issue's targets is met. It writes
 * the reliability diagram to docs/landing-odds-reliability.svg.
 *
 * Where the slots go: the localnet runs in its own child process (startLocalnet) and Solgate in another; this
 * process samples the localnet's processed slot every 50 ms and, for the sends far above clearing (at or past
 * `veryHigh`, or quoted >= 0.95), prints the processed slot at the quote, at the post and at Solgate's answer (by
 * then the localnet holds the transaction), the landing slot, and the localnet's block interval. The clock of
 * the targets starts at the quote's confirmed slot: the user's view, the quote they acted on.
 * BENCH_DUMP=dir writes every send and the slot samples as JSON.
 *
 * Pacing: at most BENCH_PER_SLOT quotes (batches of BENCH_BATCH sends) per confirmed slot (default 1; 0 = as fast
 * as it goes, as before). Unpaced, 1,200 sends spanned ~30 slots: one stretch of the market decided a profile,
 * and the bench's own ~40 sends per slot (8M requested CU) slowed the localnet's blocks.
 *
 * BENCH_CONFIDENCE=x sets the rule's margin (x standard deviations, default 1) in the Solgate it starts, through
 * test/bench/calibration-gateway.ts (no environment variable of Solgate's sets it).
 */
import { writeFileSync } from "node:fs";
import {
  appendTransactionMessageInstructions,
  compileTransaction,
  createNoopSigner,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  getTransactionEncoder,
  lamports,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
} from "@solana/kit";
import type { Address, Blockhash, KeyPairSigner, Signature } from "@solana/kit";
import { getSetComputeUnitLimitInstruction, getSetComputeUnitPriceInstruction } from "@solana-program/compute-budget";
import { getTransferSolInstruction } from "@solana-program/system";
import { hindsightCheapest, median, random, recentFeePercentiles, sleep, startFeeStack } from "./fee-bench-kit.ts";

const PROFILES = (process.env.BENCH_PROFILES ?? "calm,busy,congested,storm").split(",").filter(Boolean);
const SENDS = Number(process.env.BENCH_SENDS ?? 2000);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 300);
const K = Number(process.env.BENCH_K ?? 4);
const TARGET = 0.9;
const UNITS = 200_000;
const BATCH = Number(process.env.BENCH_BATCH ?? 12);
/**
 * Quotes (batches) per confirmed slot; 0 = as fast as the bench goes. Unpaced, 1,200 sends took ~30 slots, so a
 * run scored one short stretch of the market (one congestion spell decided a profile) and the bench's own sends
 * were ~40 per slot (8M requested CU).
 */
const PER_SLOT = Number(process.env.BENCH_PER_SLOT ?? 1);
/**
 * The rule's margin (fee-odds.ts `confidence`, standard deviations; Solgate's default 1 when unset). Set, Solgate
 * runs through test/bench/calibration-gateway.ts, which passes it on: users have no setting for it.
 */
const CONFIDENCE = process.env.BENCH_CONFIDENCE;
const SVG_PATH = new URL("../../docs/landing-odds-reliability.svg", import.meta.url);

type Kind = "recommended" | "level" | "below" | "between" | "p50" | "p75" | "max";
interface SendRecord {
  signature: string;
  kind: Kind;
  price: bigint;
  /** Odds quoted (or interpolated) at send time; undefined for baselines or when Solgate gave none. */
  odds: number | undefined;
  interpolated: boolean;
  quoteSlot: bigint;
  /** The confirmed slot read after signing, just before posting. */
  sendSlot?: bigint;
  hot: boolean;
  scored: boolean;
  landedSlot?: bigint;
  /** The quote's price of `veryHigh` (to pick the sends far above clearing). */
  veryHigh: bigint;
  /** Wall times (performance.now()): quote read, post started, Solgate answered (it had handed it to the localnet). */
  tQuote: number;
  tPost?: number;
  tAnswered?: number;
}
/** The localnet's processed slot, sampled from outside it: (time, slot) whenever it changed. */
interface SlotSample {
  t: number;
  slot: bigint;
}
interface Quote {
  slot: bigint;
  prices: { low: bigint; medium: bigint; high: bigint; veryHigh: bigint; recommended: bigint };
  odds?: { low: number; medium: number; high: number; veryHigh: number; recommended: number; withinSlots: number };
}

async function runProfile(profile: string, seed: number) {
  const log = (line: string) => process.stderr.write(`[${profile}] ${line}\n`);
  const stack = await startFeeStack({
    profile,
    log,
    env: { SOLGATE_FEES_ODDS_SLOTS: String(K), SOLGATE_FEES_TARGET: String(TARGET) },
    ...(CONFIDENCE === undefined ? {} : { entry: ["test/bench/calibration-gateway.ts", CONFIDENCE] }),
  });
  const { rpc, base, headers, hotAccount } = stack;
  const slotSamples: SlotSample[] = [];
  let sampling = true;
  try {
    log("odds are quoted; funding payers");
    // Where the slots go: the processed slot sampled every 50 ms (the localnet runs in its own process; this
    // bench only waits on the network), so each send's post and answer can be placed on the chain's clock.
    void (async () => {
      while (sampling) {
        const slot = await rpc
          .getSlot({ commitment: "processed" })
          .send()
          .catch(() => undefined);
        const t = performance.now();
        if (slot !== undefined && (slotSamples.length === 0 || slotSamples[slotSamples.length - 1].slot !== slot))
          slotSamples.push({ t, slot });
        await sleep(50);
      }
    })();
    const payers: KeyPairSigner[] = await Promise.all(Array.from({ length: 24 }, () => generateKeyPairSigner()));
    const sinks = await Promise.all(payers.map(() => generateKeyPairSigner()));
    for (const payer of payers) await rpc.requestAirdrop(payer.address, lamports(1_000_000_000_000n)).send();
    for (;;) {
      const b = await rpc.getBalance(payers[payers.length - 1].address, { commitment: "confirmed" }).send();
      if (b.value > 0n) break;
      await sleep(200);
    }

    const rand = random(seed);
    const records: SendRecord[] = [];
    let blockhash = (await rpc.getLatestBlockhash({ commitment: "confirmed" }).send()).value;
    let blockhashAt = Date.now();
    let counter = 0;

    const message = (payer: KeyPairSigner, sink: Address, price: bigint, hot: boolean, amount: bigint) =>
      pipe(
        createTransactionMessage({ version: 0 }),
        (m) => setTransactionMessageFeePayerSigner(payer, m),
        (m) =>
          setTransactionMessageLifetimeUsingBlockhash(
            blockhash as { blockhash: Blockhash; lastValidBlockHeight: bigint },
            m,
          ),
        (m) =>
          appendTransactionMessageInstructions(
            [
              getSetComputeUnitLimitInstruction({ units: UNITS }),
              getSetComputeUnitPriceInstruction({ microLamports: price }),
              getTransferSolInstruction({ source: payer, destination: hot ? hotAccount! : sink, amount }),
            ],
            m,
          ),
      );

    async function quoteFor(payer: KeyPairSigner, sink: Address, hot: boolean): Promise<Quote | undefined> {
      const draft = message(createNoopSigner(payer.address) as unknown as KeyPairSigner, sink, 0n, hot, 1n);
      const wire = new Uint8Array(getTransactionEncoder().encode(compileTransaction(draft)));
      const res = await fetch(`${base}/network/fees/estimate`, {
        method: "POST",
        headers,
        body: JSON.stringify({ transaction: Buffer.from(wire).toString("base64") }),
      });
      if (!res.ok) return undefined;
      const body = (await res.json()) as {
        slot: number;
        priority: null | {
          levels: { low: number; medium: number; high: number; veryHigh: number };
          recommended: number;
          odds: Quote["odds"] | null;
        };
      };
      if (body.priority === null) return undefined;
      const p = body.priority;
      return {
        slot: BigInt(body.slot),
        prices: {
          low: BigInt(p.levels.low),
          medium: BigInt(p.levels.medium),
          high: BigInt(p.levels.high),
          veryHigh: BigInt(p.levels.veryHigh),
          recommended: BigInt(p.recommended),
        },
        odds: p.odds ?? undefined,
      };
    }

    async function baselines(hot: boolean): Promise<{ p50: bigint; p75: bigint; max: bigint } | undefined> {
      return recentFeePercentiles(rpc, hot ? [hotAccount!] : []);
    }

    log(
      `sending ${SENDS} (first ${WARMUP} unscored)${hotAccount ? `, a third write-locking hot account ${hotAccount}` : ""}`,
    );
    let pacedSlot = -1n;
    let pacedCount = 0;
    while (counter < SENDS) {
      if (PER_SLOT > 0) {
        // At most PER_SLOT quotes per confirmed slot: wait for the next slot once they are used.
        for (;;) {
          const now = await rpc.getSlot({ commitment: "confirmed" }).send();
          if (now !== pacedSlot) {
            pacedSlot = now;
            pacedCount = 0;
          }
          if (pacedCount < PER_SLOT) break;
          await sleep(50);
        }
        pacedCount++;
      }
      if (Date.now() - blockhashAt > 5000) {
        blockhash = (await rpc.getLatestBlockhash({ commitment: "confirmed" }).send()).value;
        blockhashAt = Date.now();
      }
      const hot = hotAccount !== undefined && profile !== "calm" ? rand() < 1 / 3 : false;
      const slot = counter % payers.length;
      const payer = payers[slot];
      const sink = sinks[slot].address;
      const [quote, rpf, sentSlot] = await Promise.all([
        quoteFor(payer, sink, hot),
        baselines(hot),
        rpc.getSlot({ commitment: "confirmed" }).send(),
      ]);
      const tQuote = performance.now();
      if (quote === undefined) {
        await sleep(200);
        continue;
      }
      const batch: Promise<void>[] = [];
      // The confirmed slot read again once the batch is signed, just before it is posted (for the figures "from
      // the send"; the targets count from the slot read with the quote).
      let sendSlot: Promise<bigint> | undefined;
      for (let i = 0; i < BATCH && counter < SENDS; i++) {
        const r = rand();
        let kind: Kind;
        let price: bigint;
        let odds: number | undefined;
        let interpolated = false;
        const levels = ["low", "medium", "high", "veryHigh"] as const;
        if (r < 0.3) {
          kind = "recommended";
          price = quote.prices.recommended;
          odds = quote.odds?.recommended;
        } else if (r < 0.4) {
          // Below the recommendation (25-100% of it): no odds (none were quoted for these prices); they tell the
          // hindsight figure what cheaper fees would have done, where no level or baseline may have been sent.
          kind = "below";
          price = (quote.prices.recommended * BigInt(Math.floor((0.25 + 0.75 * rand()) * 1000))) / 1000n;
          odds = undefined;
        } else if (r < 0.55) {
          kind = "level";
          const name = levels[Math.floor(rand() * 4)];
          price = quote.prices[name];
          odds = quote.odds?.[name];
        } else if (r < 0.8) {
          kind = "between";
          // Points: (0, odds at 0 unknown) skipped; between consecutive levels and up to 2x veryHigh.
          const points = [...levels.map((n) => [quote.prices[n], quote.odds?.[n]] as const)];
          const j = Math.floor(rand() * 3);
          const [a, oa] = points[j];
          const [b, ob] = points[j + 1];
          const t = rand();
          price = a + BigInt(Math.floor(Number(b - a) * t));
          // Interpolated in price between the two quoted levels (monotone, since the odds are).
          odds =
            oa === undefined || ob === undefined
              ? undefined
              : b === a
                ? oa
                : oa + (ob - oa) * (Number(price - a) / Number(b - a));
          interpolated = true;
        } else {
          if (rpf === undefined) continue;
          const pick = rand();
          kind = pick < 1 / 3 ? "p50" : pick < 2 / 3 ? "p75" : "max";
          price = rpf[kind as "p50" | "p75" | "max"];
          odds = undefined;
        }
        counter++;
        const record: SendRecord = {
          signature: "",
          kind,
          price,
          odds,
          interpolated,
          quoteSlot: sentSlot,
          hot,
          scored: counter > WARMUP,
          veryHigh: quote.prices.veryHigh,
          tQuote,
        };
        const amount = BigInt(counter);
        batch.push(
          (async () => {
            const signed = await signTransactionMessageWithSigners(message(payer, sink, price, hot, amount));
            sendSlot ??= rpc.getSlot({ commitment: "confirmed" }).send();
            record.sendSlot = await sendSlot;
            record.tPost = performance.now();
            const res = await fetch(`${base}/transactions/send`, {
              method: "POST",
              headers,
              body: JSON.stringify({
                transaction: getBase64EncodedWireTransaction(signed),
                confirm: false,
                skipPreflight: true,
              }),
            });
            const body = (await res.json()) as { signature?: string };
            record.tAnswered = performance.now();
            if (res.ok && body.signature) {
              record.signature = body.signature;
              records.push(record);
            }
          })().catch(() => {}),
        );
      }
      await Promise.all(batch);
      if (counter % 200 < BATCH) log(`${counter} sent`);
    }
    log(`waiting ${K + 4} slots, then reading where each send landed`);
    const lastQuote = records.reduce((m, r) => (r.quoteSlot > m ? r.quoteSlot : m), 0n);
    for (;;) {
      const tip = await rpc.getSlot({ commitment: "confirmed" }).send();
      if (tip > lastQuote + BigInt(K) + 4n) break;
      await sleep(400);
    }
    for (let i = 0; i < records.length; i += 256) {
      const chunk = records.slice(i, i + 256);
      const statuses = await rpc.getSignatureStatuses(chunk.map((r) => r.signature as Signature)).send();
      statuses.value.forEach((s, j) => {
        if (s !== null) chunk[j].landedSlot = s.slot;
      });
    }
    return { records, slots: slotSamples };
  } finally {
    sampling = false;
    await stack.stop();
  }
}

/** Sends of one kind: count, share landed within k of the quote's slot and of the send's, median fee. */
interface Stats {
  n: number;
  landed: number;
  fromSend: number;
  medianPrice: bigint;
}

interface ProfileReport {
  profile: string;
  buckets: { from: number; to: number; n: number; quoted: number; observed: number }[];
  brier: number | undefined;
  recommended: Stats;
  hindsight: bigint | undefined;
  /** The figure of 20 quantile bins printed before, for comparison. */
  binnedHindsight: bigint | undefined;
  /** The overpay ratio over resamples of the sends (see ratioSpread). */
  spread: ReturnType<typeof ratioSpread>;
  /** The same, for sends that write-lock the hot account and for the others: hindsight and recommended. */
  segments: {
    name: string;
    hindsight: bigint | undefined;
    recommended: Stats;
    spread: ReturnType<typeof ratioSpread>;
  }[];
  baselines: Record<"p50" | "p75" | "max", Stats>;
  targets: { calibrated: boolean; recommendedLands: boolean; overpay: boolean };
  /** Per kind of send (and hot or not): count, mean quoted odds, landed share, median price, landing delays. */
  kinds: { name: string; n: number; quoted: number | undefined; landed: number; medianPrice: bigint; delays: string }[];
}

/**
 * Hindsight: the cheapest fee that landed >= 90%, read off a monotone fit of landed-within-k on the fee (pool
 * adjacent violators over the sends grouped by fee, equal fees always together, and adjacent groups with equal
 * shares pooled too, so that 40 sends at 40 different fees that all landed make one group): the lowest fee of the first
 * pooled group of at least 30 sends that landed >= 90%. Undefined when none did.
 */
function hindsightOf(sends: SendRecord[]): bigint | undefined {
  return hindsightCheapest(sends.map((r) => ({ price: r.price, landed: landedWithin(r) })));
}

/**
 * The figure this bench printed before (kept for comparison): 20 bins by quantile of the fees sent (>= 30 sends
 * each), the median fee of the cheapest bin that landed >= 90%. Bins split equal fees, so a bin of zero-fee sends
 * that happened to land can pass while zero-fee sends as a whole land far less.
 */
function binnedHindsightOf(sends: SendRecord[]): bigint | undefined {
  const byPrice = [...sends].sort((a, b) => (a.price < b.price ? -1 : a.price > b.price ? 1 : 0));
  const binSize = Math.max(30, Math.floor(byPrice.length / 20));
  for (let i = 0; i + binSize <= byPrice.length; i += binSize) {
    const bin = byPrice.slice(i, i + binSize);
    if (bin.filter(landedWithin).length / bin.length >= 0.9) return median(bin.map((r) => r.price));
  }
  return undefined;
}

/**
 * How much the overpay ratio (median fee of the `recommended` sends over the hindsight fee) owes to which sends
 * happened to land: the ratio recomputed over `RESAMPLES` resamples of the scored sends (drawn with replacement, a
 * fixed seed), as its 10th, 50th and 90th percentiles and the share of resamples above 1.2 ("inf" where no group
 * landed >= 90% or only the recommended fee is positive). It is the spread within one run's sends only: the 12
 * sends of a batch share a quote and a slot (so it understates it), and the market's drift from run to run is
 * not in it. On congested it shows how often the overall figure falls to the other sends' own (much lower)
 * hindsight fee instead of being lifted by the hot account's failures.
 */
const RESAMPLES = 400;
function ratioSpread(sends: SendRecord[]): { p10: number; p50: number; p90: number; over: number } | undefined {
  if (!sends.some((r) => r.kind === "recommended")) return undefined;
  // mulberry32, written here: a seeded generator so that the printed spread repeats for the same sends.
  let seed = 0x2b7e1516;
  const random = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const ratios: number[] = [];
  for (let i = 0; i < RESAMPLES; i++) {
    const sample = sends.map(() => sends[Math.floor(random() * sends.length)]);
    const recommended = sample.filter((r) => r.kind === "recommended");
    if (recommended.length === 0) continue;
    const m = median(recommended.map((r) => r.price));
    const h = hindsightOf(sample);
    ratios.push(h === undefined ? Infinity : h === 0n ? (m === 0n ? 1 : Infinity) : Number(m) / Number(h));
  }
  ratios.sort((a, b) => a - b);
  const at = (q: number) => ratios[Math.min(ratios.length - 1, Math.floor(q * ratios.length))];
  return { p10: at(0.1), p50: at(0.5), p90: at(0.9), over: ratios.filter((x) => x > 1.2).length / ratios.length };
}

const spreadText = (s: ReturnType<typeof ratioSpread>) =>
  s === undefined
    ? "n/a"
    : `p10 ${fixed(s.p10)}, p50 ${fixed(s.p50)}, p90 ${fixed(s.p90)}; above 1.2 in ${(100 * s.over).toFixed(0)}%`;
/** A ratio to two decimals; "inf" where there was no hindsight fee or it was 0 below a positive fee. */
const fixed = (x: number) => (Number.isFinite(x) ? x.toFixed(2) : "inf");

/** A median fee over the hindsight fee, as printed: "n/a" without a hindsight fee; 0 over 0 counts as 1. */
function ratioOf(medianPrice: bigint, hindsight: bigint | undefined): string {
  if (hindsight === undefined) return "n/a";
  if (hindsight === 0n) return medianPrice === 0n ? "1.00 (both 0)" : "inf";
  return (Number(medianPrice) / Number(hindsight)).toFixed(2);
}

const landedWithinOfSend = (r: SendRecord) =>
  r.landedSlot !== undefined && r.landedSlot <= (r.sendSlot ?? r.quoteSlot) + BigInt(K);
const landedWithin = (r: SendRecord) => r.landedSlot !== undefined && r.landedSlot <= r.quoteSlot + BigInt(K);

function report(profile: string, all: SendRecord[]): ProfileReport {
  const scored = all.filter((r) => r.scored);
  const quoted = scored.filter((r) => r.odds !== undefined);
  const buckets = Array.from({ length: 10 }, (_, i) => ({
    from: i / 10,
    to: (i + 1) / 10,
    n: 0,
    quoted: 0,
    observed: 0,
  }));
  let brierSum = 0;
  for (const r of quoted) {
    const b = buckets[Math.min(9, Math.floor(r.odds! * 10))];
    const y = landedWithin(r) ? 1 : 0;
    b.n++;
    b.quoted += r.odds!;
    b.observed += y;
    brierSum += (r.odds! - y) ** 2;
  }
  for (const b of buckets) {
    if (b.n > 0) {
      b.quoted /= b.n;
      b.observed /= b.n;
    }
  }
  const stats = (rs: SendRecord[]) => ({
    n: rs.length,
    landed: rs.length === 0 ? 0 : rs.filter(landedWithin).length / rs.length,
    fromSend: rs.length === 0 ? 0 : rs.filter(landedWithinOfSend).length / rs.length,
    medianPrice: median(rs.map((r) => r.price)),
  });
  const hindsight = hindsightOf(scored);
  const recommended = stats(scored.filter((r) => r.kind === "recommended"));
  const calibrated = buckets.every((b) => b.n < 100 || Math.abs(b.observed - b.quoted) <= 0.05);
  const overpay =
    hindsight === undefined
      ? false
      : hindsight === 0n
        ? recommended.medianPrice === 0n
        : Number(recommended.medianPrice) <= 1.2 * Number(hindsight);
  return {
    profile,
    buckets,
    brier: quoted.length === 0 ? undefined : brierSum / quoted.length,
    recommended,
    hindsight,
    binnedHindsight: binnedHindsightOf(scored),
    spread: ratioSpread(scored),
    segments: [false, true]
      .map((hot) => ({
        name: hot ? "hot-account sends" : "other sends",
        hindsight: hindsightOf(scored.filter((r) => r.hot === hot)),
        recommended: stats(scored.filter((r) => r.kind === "recommended" && r.hot === hot)),
        spread: ratioSpread(scored.filter((r) => r.hot === hot)),
      }))
      .filter((segment) => segment.recommended.n > 0),
    baselines: {
      p50: stats(scored.filter((r) => r.kind === "p50")),
      p75: stats(scored.filter((r) => r.kind === "p75")),
      max: stats(scored.filter((r) => r.kind === "max")),
    },
    targets: { calibrated, recommendedLands: recommended.landed >= TARGET, overpay },
    kinds: (["recommended", "below", "level", "between", "p50", "p75", "max"] as const)
      .flatMap((kind) =>
        [false, true].map((hot) => {
          const rs = scored.filter((r) => r.kind === kind && r.hot === hot);
          const q = rs.filter((r) => r.odds !== undefined);
          return {
            name: `${kind}${hot ? " (hot account)" : ""}`,
            n: rs.length,
            quoted: q.length === 0 ? undefined : q.reduce((sum, r) => sum + r.odds!, 0) / q.length,
            landed: rs.length === 0 ? 0 : rs.filter(landedWithin).length / rs.length,
            medianPrice: median(rs.map((r) => r.price)),
            // Slots from the send to its block: 1..8, later, never.
            delays: [1, 2, 3, 4, 5, 6, 7, 8]
              .map(
                (d) => rs.filter((r) => r.landedSlot !== undefined && r.landedSlot - r.quoteSlot === BigInt(d)).length,
              )
              .concat([
                rs.filter((r) => r.landedSlot !== undefined && r.landedSlot - r.quoteSlot > 8n).length,
                rs.filter((r) => r.landedSlot === undefined).length,
              ])
              .join(" "),
          };
        }),
      )
      .filter((k) => k.n > 0),
  };
}

function print(r: ProfileReport): void {
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  console.log(
    `\n== ${r.profile} ==  (landing within ${K} slots of the confirmed slot at the send; margin ${CONFIDENCE ?? "1 (default)"} sd)`,
  );
  console.log("quoted odds   sends   mean quoted   observed   |obs-quoted|");
  for (const b of r.buckets) {
    if (b.n === 0) continue;
    const gap = Math.abs(b.observed - b.quoted);
    console.log(
      `${b.from.toFixed(1)}-${b.to.toFixed(1)}     ${String(b.n).padStart(5)}   ${b.quoted.toFixed(3).padStart(11)}   ${b.observed.toFixed(3).padStart(8)}   ${gap.toFixed(3)}${b.n >= 100 && gap > 0.05 ? "  (over 0.05)" : ""}`,
    );
  }
  console.log(`Brier score: ${r.brier === undefined ? "n/a" : r.brier.toFixed(4)}`);
  console.log(
    "by kind of send:                 sends  mean quoted  landed  median fee  landed after 1..8 slots, later, never",
  );
  for (const k of r.kinds)
    console.log(
      `  ${k.name.padEnd(28)} ${String(k.n).padStart(5)}  ${(k.quoted === undefined ? "-" : k.quoted.toFixed(3)).padStart(11)}  ${k.landed.toFixed(3)}  ${String(k.medianPrice).padStart(10)}  ${k.delays}`,
    );
  const h = r.hindsight === undefined ? "none landed >= 90%" : String(r.hindsight);
  const binned = r.binnedHindsight === undefined ? "none" : String(r.binnedHindsight);
  console.log(
    `cheapest fee landing >= 90% in hindsight: ${h} micro-lamports/CU (monotone fit over fees; 20 quantile bins as printed before: ${binned})`,
  );
  const line = (name: string, s: Stats) => {
    const ratio = ratioOf(s.medianPrice, r.hindsight);
    console.log(
      `${name.padEnd(24)} sends ${String(s.n).padStart(5)}  landed within ${K}: ${pct(s.landed).padStart(6)} (of the send: ${pct(s.fromSend).padStart(6)})  median fee ${String(s.medianPrice).padStart(9)}  / hindsight ${ratio}`,
    );
  };
  line("Solgate recommended", r.recommended);
  line("baseline p50 (RPF 150)", r.baselines.p50);
  line("baseline p75 (RPF 150)", r.baselines.p75);
  line("baseline max (RPF 150)", r.baselines.max);
  console.log(`  overpay ratio over ${RESAMPLES} resamples of the sends: ${spreadText(r.spread)}`);
  for (const segment of r.segments) {
    const h = segment.hindsight === undefined ? "none landed >= 90%" : String(segment.hindsight);
    const s = segment.recommended;
    console.log(
      `  ${segment.name}: hindsight ${h}; recommended sends ${s.n}, landed ${pct(s.landed)} (of the send: ${pct(s.fromSend)}), median fee ${s.medianPrice}, / hindsight ${ratioOf(s.medianPrice, segment.hindsight)} (resampled: ${spreadText(segment.spread)})`,
    );
  }
  const yes = (b: boolean) => (b ? "met" : "NOT met");
  console.log(`target: every bucket >= 100 sends within 0.05: ${yes(r.targets.calibrated)}`);
  console.log(`target: recommended lands within ${K} >= 90%: ${yes(r.targets.recommendedLands)}`);
  console.log(`target: recommended median fee <= 1.2x hindsight: ${yes(r.targets.overpay)}`);
  const perSegment = r.segments.every((segment) => {
    const ratio = ratioOf(segment.recommended.medianPrice, segment.hindsight);
    return ratio.startsWith("1.00 (both 0)") || (ratio !== "n/a" && ratio !== "inf" && Number(ratio) <= 1.2);
  });
  console.log(
    `  (stricter, not the issue's wording: the same within each segment, hot-account sends and others: ${yes(perSegment)})`,
  );
}

function svg(reports: ProfileReport[]): string {
  const size = 360;
  const pad = 40;
  const x = (v: number) => pad + v * (size - 2 * pad);
  const y = (v: number) => size - pad - v * (size - 2 * pad);
  const colors = ["#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e"];
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${size + 140}" height="${size}" font-family="sans-serif" font-size="11">`,
    `<title>Landing odds: quoted vs observed landing within ${K} slots, per traffic profile</title>`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<line x1="${x(0)}" y1="${y(0)}" x2="${x(1)}" y2="${y(1)}" stroke="#999" stroke-dasharray="4 3"/>`,
    `<line x1="${x(0)}" y1="${y(0)}" x2="${x(1)}" y2="${y(0)}" stroke="black"/>`,
    `<line x1="${x(0)}" y1="${y(0)}" x2="${x(0)}" y2="${y(1)}" stroke="black"/>`,
    `<text x="${size / 2}" y="${size - 8}" text-anchor="middle">quoted odds of landing within ${K} slots</text>`,
    `<text x="12" y="${size / 2}" transform="rotate(-90 12 ${size / 2})" text-anchor="middle">observed landing share</text>`,
  ];
  for (let t = 0; t <= 1.0001; t += 0.2) {
    parts.push(`<text x="${x(t)}" y="${y(0) + 14}" text-anchor="middle">${t.toFixed(1)}</text>`);
    parts.push(`<text x="${x(0) - 6}" y="${y(t) + 4}" text-anchor="end">${t.toFixed(1)}</text>`);
  }
  reports.forEach((r, i) => {
    const color = colors[i % colors.length];
    const points = r.buckets.filter((b) => b.n > 0);
    parts.push(
      `<polyline fill="none" stroke="${color}" stroke-width="1.5" points="${points.map((b) => `${x(b.quoted).toFixed(1)},${y(b.observed).toFixed(1)}`).join(" ")}"/>`,
    );
    for (const b of points)
      parts.push(
        `<circle cx="${x(b.quoted).toFixed(1)}" cy="${y(b.observed).toFixed(1)}" r="${Math.min(6, 1.5 + Math.sqrt(b.n) / 6).toFixed(1)}" fill="${color}"/>`,
      );
    parts.push(
      `<text x="${size}" y="${pad + 16 * i}" fill="${color}">${r.profile} (Brier ${r.brier?.toFixed(3) ?? "n/a"})</text>`,
    );
  });
  parts.push("</svg>");
  return parts.join("\n");
}

/**
 * Where the slots go for the sends far above clearing (scored, price >= the quote's `veryHigh` and > 0): per send,
 * the localnet's processed slot when the quote was read, when the post started and when Solgate answered (by then
 * the localnet had the transaction), each minus the quote's confirmed slot, and the landing slot minus the slot at
 * the answer (1 = the next block took it). Plus how long the localnet's blocks took (from the samples).
 */
function printSlotTrace(records: SendRecord[], samples: SlotSample[]): void {
  const slotAt = (t: number | undefined): bigint | undefined => {
    if (t === undefined) return undefined;
    let found: bigint | undefined;
    for (const s of samples) {
      if (s.t > t) break;
      found = s.slot;
    }
    return found;
  };
  const gaps = samples
    .slice(1)
    .map((s, i) => (s.t - samples[i].t) / Number(s.slot - samples[i].slot))
    .sort((a, b) => a - b);
  const q = (p: number) =>
    gaps.length ? gaps[Math.min(gaps.length - 1, Math.floor(p * gaps.length))].toFixed(0) : "n/a";
  console.log(
    `block interval (ms per slot, sampled from outside): median ${q(0.5)}, p90 ${q(0.9)}, p99 ${q(0.99)}, max ${q(1 - 1e-9)}`,
  );
  // Far above clearing: at or past the quote's veryHigh, or quoted >= 0.95.
  const high = records.filter(
    (r) => r.scored && r.price > 0n && (r.price >= r.veryHigh || (r.odds !== undefined && r.odds >= 0.95)),
  );
  const rows = high.map((r) => {
    const atQuote = slotAt(r.tQuote);
    const atPost = slotAt(r.tPost);
    const atAnswer = slotAt(r.tAnswered);
    return {
      r,
      quote: atQuote === undefined ? undefined : Number(atQuote - r.quoteSlot),
      post: atPost === undefined ? undefined : Number(atPost - r.quoteSlot),
      answer: atAnswer === undefined ? undefined : Number(atAnswer - r.quoteSlot),
      waited: atAnswer === undefined || r.landedSlot === undefined ? undefined : Number(r.landedSlot - atAnswer),
      landed: r.landedSlot === undefined ? undefined : Number(r.landedSlot - r.quoteSlot),
      postMs: r.tAnswered !== undefined && r.tPost !== undefined ? r.tAnswered - r.tPost : undefined,
      quoteToPostMs: r.tPost !== undefined ? r.tPost - r.tQuote : undefined,
    };
  });
  const missed = rows.filter((x) => !landedWithin(x.r));
  const hist = (values: (number | undefined)[]) => {
    const counts = new Map<string, number>();
    for (const v of values)
      counts.set(v === undefined ? "-" : String(v), (counts.get(v === undefined ? "-" : String(v)) ?? 0) + 1);
    return [...counts]
      .sort(([a], [b]) => (a === "-" ? 1 : b === "-" ? -1 : Number(a) - Number(b)))
      .map(([k, n]) => `${k}:${n}`)
      .join(" ");
  };
  console.log(
    `sends at >= veryHigh: ${high.length}, landed within ${K} of the quote ${high.length - missed.length}/${high.length}`,
  );
  for (const [name, set] of [
    ["all", rows],
    ["missed", missed],
    ["hot-account, all", rows.filter((x) => x.r.hot)],
    ["hot-account, missed", missed.filter((x) => x.r.hot)],
  ] as const) {
    if (set.length === 0) continue;
    console.log(`  ${name} (${set.length}): slots after the quote's confirmed slot (value:count)`);
    console.log(`    processed slot at the quote: ${hist(set.map((x) => x.quote))}`);
    console.log(`    at the post:                 ${hist(set.map((x) => x.post))}`);
    console.log(`    at Solgate's answer:         ${hist(set.map((x) => x.answer))}`);
    console.log(`    landing - slot at answer:    ${hist(set.map((x) => x.waited))}`);
    console.log(`    landing:                     ${hist(set.map((x) => x.landed))}`);
    const ms = (v: (number | undefined)[]) => {
      const d = v.filter((x): x is number => x !== undefined).sort((a, b) => a - b);
      return d.length
        ? `median ${d[Math.floor(d.length / 2)].toFixed(0)} ms, max ${d[d.length - 1].toFixed(0)} ms`
        : "n/a";
    };
    if (name.endsWith("missed"))
      for (const x of set.slice(0, 8))
        console.log(
          `    e.g. ${x.r.kind}${x.r.hot ? " hot" : ""} fee ${x.r.price} quoted ${x.r.odds?.toFixed(3) ?? "-"}: quote slot ${x.r.quoteSlot}, processed at the quote +${x.quote}, at the post +${x.post}, at the answer +${x.answer}, landed +${x.landed ?? "never"} (posted ${x.quoteToPostMs?.toFixed(0)} ms after the quote, answered ${x.postMs?.toFixed(0)} ms later)`,
        );
    console.log(
      `    quote -> post: ${ms(set.map((x) => x.quoteToPostMs))}; post -> answer: ${ms(set.map((x) => x.postMs))}`,
    );
  }
}

const reports: ProfileReport[] = [];
for (const [i, profile] of PROFILES.entries()) {
  const { records, slots } = await runProfile(profile, 1000 + i);
  const r = report(profile, records);
  reports.push(r);
  print(r);
  printSlotTrace(records, slots);
  // BENCH_DUMP=dir: every send (and the slot samples) as JSON, for looking at a run afterwards.
  if (process.env.BENCH_DUMP)
    writeFileSync(
      `${process.env.BENCH_DUMP}/calibration-${profile}.json`,
      JSON.stringify({ records, slots }, (_, v: unknown) => (typeof v === "bigint" ? Number(v) : v)),
    );
}
writeFileSync(SVG_PATH, `${svg(reports)}\n`);
console.log(`\nreliability diagram: docs/landing-odds-reliability.svg`);
const allMet = reports.every((r) => r.targets.calibrated && r.targets.recommendedLands && r.targets.overpay);
console.log(`all targets met on every profile: ${allMet ? "yes" : "no"}`);
process.exit(0);
