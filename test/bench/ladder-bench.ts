/**
 * The fee ladder against single sends (`npx node test/bench/ladder-bench.ts [--n 40] [--warmup 20]
 * [--scenarios congested,storm,jump] [--deadline 20] [--rungs 4] [--off-units 200000] [--hot-units 0] [--dump dir]`),
 * issue 37 item 7.
 *
 * The transfers off the hot account also call a program that really spends compute units (the localnet's compute
 * burner, deployed at start with LOCALNET_PROGRAMS), so that PrepareLadder's simulation measures a ~`--off-units`
 * limit and the send competes for block room as a real program call does; a plain transfer (`--off-units 0`) measures
 * ~1,700 CU and fits the room any full block leaves, so the market cleared at 0 there. The hot-account transfers stay
 * plain: they compete for the hot account's own limit.
 *
 * Per scenario it starts the localnet with that traffic and Solgate as a separate process (fee-bench-kit.ts), funds
 * payers and creates one durable nonce account per ladder, then runs `--warmup` unscored rounds (Solgate's odds
 * learn from the outcomes of the sends it tracks) and `--n` scored rounds, one per confirmed slot,
 * alternating a transfer into the traffic's hot account and one to an account of its own. Each round is one transfer
 * sent several ways, each from its own payer, all posted in the same moment through Solgate's REST API:
 * - `ladder`: PrepareLadder (the deadline, 4 rungs), signed, SendLadder; Solgate climbs it;
 * - `recommended`: a single send at the `recommended` EstimateFees quoted for the same draft;
 * - `top rung`: a single send at the ladder's top rung's price;
 * - `p75 RPF`: a single send at the p75 of getRecentPrioritizationFees (150 slots, the hot account's for hot
 *   transfers), what users take today;
 * - two probes at prices drawn log-uniformly from half the bottom rung to 1.25 x the top rung: not reported on
 *   their own, they give the hindsight figure prices the others do not cover;
 * - on `jump` only, after the jump: `recommended (before jump)`, a single send at the last `recommended` quoted
 *   before the jump for that segment.
 * Single sends carry the ladder's compute-unit limit, so their fee in lamports compares with the ladder's as the
 * price does, and its loaded-accounts data-size limit (PrepareTransaction sets both), so they cost a block what its
 * rungs cost but for the nonce.
 *
 * Scenarios: `congested` and `storm` are the localnet's traffic profiles; `jump` runs `congested`, sends `--n`/3
 * unscored rounds, then multiplies the traffic's prices by 10 (`localnet_setTrafficPriceScale`) and scores the next
 * `--n` rounds.
 *
 * A send "lands within the deadline" when its slot is at most `--deadline` slots after the processed slot read just
 * before the round was posted (the ladder's own deadline counts from its first submission, a little later, so this
 * frame is, if anything, strict on the ladder). Fees are compute-unit prices (µL/CU) of the sends that landed (the
 * ladder's: its landed rung's); the hindsight fee is the cheapest that landed within the deadline >= 90% among the
 * segment's single sends (fee-bench-kit.ts `hindsightCheapest`). Where each send landed, and how many of a ladder's
 * rungs are on chain, is read from the localnet itself (getSignatureStatuses, history searched) once every ladder
 * has ended. A price of 0 in a ratio's denominator counts as 1 µL/CU (`ratioOf`). Each scenario also prints the room
 * the newest block left under the block limit at every round (localnet_status): why a small transfer off the hot
 * account lands at any price.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import bs58 from "bs58";
import {
  appendTransactionMessageInstructions,
  compileTransaction,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  getTransactionDecoder,
  getTransactionEncoder,
  lamports,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransaction,
  signTransactionMessageWithSigners,
} from "@solana/kit";
import type { Address, Blockhash, KeyPairSigner, Signature } from "@solana/kit";
import {
  getSetComputeUnitLimitInstruction,
  getSetComputeUnitPriceInstruction,
  getSetLoadedAccountsDataSizeLimitInstruction,
} from "@solana-program/compute-budget";
import {
  getCreateAccountInstruction,
  getInitializeNonceAccountInstruction,
  getNonceSize,
  getTransferSolInstruction,
  SYSTEM_PROGRAM_ADDRESS,
} from "@solana-program/system";
import {
  hindsightCheapest,
  median,
  percentile,
  random,
  recentFeePercentiles,
  sleep,
  startFeeStack,
} from "./fee-bench-kit.ts";
import { computeBurnerElf } from "@solgate/localnet/testing";
import { hasHeadroom, priorityScaleOf } from "../../src/transactions/ladder/ladder-plan.ts";
import { computeBudgetOf } from "../../src/solana/compute-budget.ts";
import { costShapeOf } from "../../src/fees/transaction-cost.ts";
import type { CostShape } from "../../src/fees/transaction-cost.ts";
import { decodeWireTransaction, staticWritableAccounts } from "../../src/solana/wire-transaction.ts";
import type { FeeStack } from "./fee-bench-kit.ts";

const { values: args } = parseArgs({
  options: {
    n: { type: "string", default: "40" },
    warmup: { type: "string", default: "20" },
    scenarios: { type: "string", default: "congested,storm,jump" },
    deadline: { type: "string", default: "20" },
    rungs: { type: "string", default: "4" },
    "off-units": { type: "string", default: "200000" },
    "hot-units": { type: "string", default: "0" },
    dump: { type: "string" },
  },
});
const N = Number(args.n);
/** Unscored rounds first: Solgate's odds learn from the outcomes of the sends it tracks (as the calibration bench's warm-up). */
const WARMUP = Number(args.warmup);
const DEADLINE = Number(args.deadline);
const RUNGS = Number(args.rungs);
const SCENARIOS = args.scenarios.split(",").filter(Boolean);
/**
 * The compute-unit limit the off-hot drafts should measure at: they call a program that really spends about this
 * many units (0: a plain transfer, ~1,700 CU with PrepareLadder's margin, which fits the room any full block leaves).
 */
const OFF_UNITS = Number(args["off-units"]);
/**
 * The burner's turns for a limit of `units` (OFF_UNITS, HOT_UNITS): PrepareLadder's limit is the simulated units plus 10% and 1,000
 * (prepare-transaction.ts), and the rest of the draft (nonce advance, transfer, compute budget) simulates at a few
 * hundred units.
 */
const turnsFor = (units: number) => (units > 0 ? Math.max(1, Math.floor(((units - 1_000) / 1.1 - 600) / 2)) : 0);
/**
 * The compute-unit limit the hot-account drafts should measure at (default 0: plain transfers, whose reward is mostly the signature fee's
 * share; with a program call of ~100,000 CU the price dominates the reward, as on a busy program's accounts).
 */
const HOT_UNITS = Number(args["hot-units"]);
/** Payers of one round: the ladder's and one per single send (recommended, top, p75, two probes, stale). */
const PER_ROUND = 7;
/** Rounds before a payer is used again. */
const ROTATE = 4;

type Kind = "ladder" | "recommended" | "top" | "p75" | "probe" | "stale";
const KIND_NAMES: Record<Kind, string> = {
  ladder: "ladder",
  recommended: "recommended",
  top: "top rung",
  p75: "p75 RPF",
  probe: "probe",
  stale: "recommended (before jump)",
};
const REPORTED: Kind[] = ["ladder", "recommended", "top", "p75", "stale"];

interface Send {
  kind: Kind;
  hot: boolean;
  scored: boolean;
  round: number;
  roundSlot: bigint;
  /** The price bid (single sends) or paid (the ladder's landed rung). */
  price: bigint;
  /** The compute-unit limit (the ladder's, for every send of the round). */
  units: number;
  signature: string;
  landedSlot?: bigint;
  /** Ladders: every rung's signature and price, the rungs submitted, the final state, the rungs on chain. */
  rungs?: { signature: string; price: bigint }[];
  submitted?: number;
  state?: string;
  landedRung?: number;
  onChain?: number;
  /** Ladders: Solgate's last record of it (REST), for --dump. */
  record?: unknown;
  /** What the transaction costs a block, as the scheduler reads it (the ladder's: its rungs'). */
  shape?: CostShape;
}

interface Prepared {
  rungs: { transaction: string; price: number; odds: number; sendAtSlot: number }[];
  computeUnitLimit: number;
}

async function post<T>(stack: FeeStack, path: string, body: unknown): Promise<{ ok: boolean; json: T }> {
  const res = await fetch(`${stack.base}${path}`, {
    method: "POST",
    headers: stack.headers,
    body: JSON.stringify(body),
  });
  return { ok: res.ok, json: (await res.json()) as T };
}

/** A signed transaction's cost shape, as the fee market reads a block's transactions. */
const shapeOf = (wire: Uint8Array): CostShape => {
  const { message, signatures } = decodeWireTransaction(wire);
  return costShapeOf(message, signatures.length, staticWritableAccounts(message).length);
};

/** The SetLoadedAccountsDataSizeLimit a rung carries (PrepareLadder sets it from its simulation). */
const loadedLimitOf = (wire: Uint8Array) =>
  computeBudgetOf(decodeWireTransaction(wire).message).requestedLoadedAccountsBytes;

const b64 = (wire: Uint8Array) => Buffer.from(wire).toString("base64");
const wireOf = (signed: Parameters<typeof getBase64EncodedWireTransaction>[0]) =>
  new Uint8Array(Buffer.from(getBase64EncodedWireTransaction(signed), "base64"));

/** Creates one initialized nonce account per authority (a high fee, so they land on a full chain) and waits for them. */
async function createNonceAccounts(stack: FeeStack, funder: KeyPairSigner, authorities: Address[]): Promise<Address[]> {
  const { rpc } = stack;
  const space = BigInt(getNonceSize());
  const rent = await rpc.getMinimumBalanceForRentExemption(space).send();
  const accounts = await Promise.all(authorities.map(() => generateKeyPairSigner()));
  const pending = new Set(accounts.map((_, i) => i));
  for (let attempt = 0; pending.size > 0; attempt++) {
    if (attempt === 5) throw new Error(`${pending.size} nonce accounts not created after 5 attempts`);
    const { value: blockhash } = await rpc.getLatestBlockhash({ commitment: "confirmed" }).send();
    await Promise.all(
      [...pending].map(async (i) => {
        const message = pipe(
          createTransactionMessage({ version: 0 }),
          (m) => setTransactionMessageFeePayerSigner(funder, m),
          (m) => setTransactionMessageLifetimeUsingBlockhash(blockhash, m),
          (m) =>
            appendTransactionMessageInstructions(
              [
                getSetComputeUnitLimitInstruction({ units: 20_000 }),
                getSetComputeUnitPriceInstruction({ microLamports: 20_000_000n }),
                getCreateAccountInstruction({
                  payer: funder,
                  newAccount: accounts[i],
                  lamports: rent,
                  space,
                  programAddress: SYSTEM_PROGRAM_ADDRESS,
                }),
                getInitializeNonceAccountInstruction({
                  nonceAccount: accounts[i].address,
                  nonceAuthority: authorities[i],
                }),
              ],
              m,
            ),
        );
        const signed = await signTransactionMessageWithSigners(message);
        await rpc
          .sendTransaction(getBase64EncodedWireTransaction(signed), { encoding: "base64", skipPreflight: true })
          .send()
          .catch(() => undefined);
      }),
    );
    const until = Date.now() + 20_000;
    while (pending.size > 0 && Date.now() < until) {
      await sleep(500);
      const ids = [...pending];
      for (let from = 0; from < ids.length; from += 100) {
        const chunk = ids.slice(from, from + 100);
        const { value } = await rpc
          .getMultipleAccounts(
            chunk.map((i) => accounts[i].address),
            { commitment: "confirmed", encoding: "base64" },
          )
          .send();
        value.forEach((account, j) => {
          if (account !== null) pending.delete(chunk[j]);
        });
      }
    }
  }
  return accounts.map((a) => a.address);
}

/** The newest block's packing as the localnet reports it (localnet_status), one read per round. */
interface Packing {
  slot: string;
  cost: string;
  blockCostLimit: string;
}
const packings = new Map<string, Map<string, Packing>>();

async function runScenario(scenario: string, seed: number): Promise<Send[]> {
  const log = (line: string) => process.stderr.write(`[${scenario}] ${line}\n`);
  const profile = scenario === "jump" ? "congested" : scenario;
  const warm = WARMUP + (scenario === "jump" ? Math.ceil(N / 3) : 0);
  const total = warm + N;
  // The off-hot drafts' program, deployed at start as solana-test-validator's --bpf-program would.
  const burner = OFF_UNITS > 0 ? (await generateKeyPairSigner()).address : undefined;
  const hotBurner = HOT_UNITS > 0 ? (await generateKeyPairSigner()).address : undefined;
  const programs: string[] = [];
  for (const [address, units] of [
    [burner, OFF_UNITS],
    [hotBurner, HOT_UNITS],
  ] as const) {
    if (address === undefined) continue;
    const file = path.join(mkdtempSync(path.join(tmpdir(), "ladder-bench-")), "burner.so");
    writeFileSync(file, computeBurnerElf(turnsFor(units)));
    programs.push(`${address}=${file}`);
  }
  const localnetEnv = programs.length === 0 ? undefined : { LOCALNET_PROGRAMS: programs.join(",") };
  const stack = await startFeeStack({ profile, log, localnetEnv });
  const { rpc, hotAccount } = stack;
  if (hotAccount === undefined) throw new Error(`profile ${profile} has no hot account`);
  try {
    log("odds are quoted; funding payers");
    const payers = await Promise.all(Array.from({ length: PER_ROUND * ROTATE }, () => generateKeyPairSigner()));
    const sinks = await Promise.all(payers.map(() => generateKeyPairSigner()));
    for (const payer of payers) await rpc.requestAirdrop(payer.address, lamports(1_000_000_000_000n)).send();
    for (const payer of payers)
      for (;;) {
        const b = await rpc.getBalance(payer.address, { commitment: "confirmed" }).send();
        if (b.value > 0n) break;
        await sleep(200);
      }
    const ladderPayer = (round: number) => payers[(round % ROTATE) * PER_ROUND];
    log(`creating ${total} nonce accounts`);
    const nonces = await createNonceAccounts(
      stack,
      payers[1],
      Array.from({ length: total }, (_, round) => ladderPayer(round).address),
    );
    const rand = random(seed);
    const sends: Send[] = [];
    let blockhash = (await rpc.getLatestBlockhash({ commitment: "confirmed" }).send()).value;
    let blockhashAt = Date.now();
    const stale: Record<"hot" | "off", bigint | undefined> = { hot: undefined, off: undefined };
    let counter = 0;

    // Off the hot account the draft also calls the burner (when there is one): a send that costs a block ~OFF_UNITS.
    const transfer = (
      payer: KeyPairSigner,
      to: Address,
      units: number | undefined,
      price: bigint | undefined,
      burn: boolean,
      loaded?: number,
    ) =>
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
              ...(units === undefined ? [] : [getSetComputeUnitLimitInstruction({ units })]),
              ...(price === undefined ? [] : [getSetComputeUnitPriceInstruction({ microLamports: price })]),
              ...(loaded === undefined
                ? []
                : [getSetLoadedAccountsDataSizeLimitInstruction({ accountDataSizeLimit: loaded })]),
              // Above the rent-exempt minimum: the first transfer to a sink creates it.
              getTransferSolInstruction({ source: payer, destination: to, amount: 1_000_000n + BigInt(counter++) }),
              ...(burn && burner !== undefined
                ? [{ programAddress: burner, accounts: [], data: new Uint8Array() }]
                : []),
              ...(!burn && hotBurner !== undefined
                ? [{ programAddress: hotBurner, accounts: [], data: new Uint8Array() }]
                : []),
            ],
            m,
          ),
      );

    log(`${total} rounds (${warm} unscored), ${DEADLINE}-slot deadline, ${RUNGS} rungs; hot account ${hotAccount}`);
    let pacedSlot = -1n;
    for (let round = 0; round < total; round++) {
      // One round per confirmed slot.
      for (;;) {
        const now = await rpc.getSlot({ commitment: "confirmed" }).send();
        if (now !== pacedSlot) {
          pacedSlot = now;
          break;
        }
        await sleep(50);
      }
      if (scenario === "jump" && round === warm) {
        await stack.control("localnet_setTrafficPriceScale", [10]);
        log(`round ${round}: the traffic's prices x10 from now on`);
      }
      if (Date.now() - blockhashAt > 5000) {
        blockhash = (await rpc.getLatestBlockhash({ commitment: "confirmed" }).send()).value;
        blockhashAt = Date.now();
      }
      const hot = round % 2 === 1;
      const segment = hot ? "hot" : "off";
      const status = (await stack.control("localnet_status", [])) as { lastBlock?: Packing };
      if (status.lastBlock !== undefined) {
        const seen = packings.get(scenario) ?? new Map<string, Packing>();
        seen.set(String(status.lastBlock.slot), status.lastBlock);
        packings.set(scenario, seen);
      }
      const base = (round % ROTATE) * PER_ROUND;
      const payer = (v: number) => payers[base + v];
      const to = (v: number) => (hot ? hotAccount : sinks[base + v].address);
      const draft = b64(
        new Uint8Array(
          getTransactionEncoder().encode(compileTransaction(transfer(payer(0), to(0), undefined, undefined, !hot))),
        ),
      );
      const [rpf, prepared] = await Promise.all([
        recentFeePercentiles(rpc, hot ? [hotAccount] : []),
        post<Prepared>(stack, "/transactions/ladder/prepare", {
          transaction: draft,
          nonceAccount: nonces[round],
          rungs: RUNGS,
          deadlineSlots: DEADLINE,
        }),
      ]);
      if (!prepared.ok || rpf === undefined) {
        log(`round ${round}: skipped (${JSON.stringify(prepared.json).slice(0, 200)})`);
        continue;
      }
      const units = prepared.json.computeUnitLimit;
      const loaded = loadedLimitOf(Buffer.from(prepared.json.rungs[0].transaction, "base64"));
      if (round < 2)
        log(
          `round ${round} (${segment}): PrepareLadder measured a ${units}-CU limit, ${loaded ?? "no"} bytes of loaded-accounts data`,
        );
      // The quote is for the draft with the ladder's compute-unit limit: the one every send of the round carries.
      const estimate = await post<{ priority: { recommended: number } | null }>(stack, "/network/fees/estimate", {
        transaction: b64(
          new Uint8Array(
            getTransactionEncoder().encode(
              compileTransaction(transfer(payer(0), to(0), units, undefined, !hot, loaded)),
            ),
          ),
        ),
      });
      if (!estimate.ok || estimate.json.priority === null) {
        log(`round ${round}: skipped (${JSON.stringify(estimate.json).slice(0, 200)})`);
        continue;
      }
      const recommended = BigInt(estimate.json.priority.recommended);
      const prices = prepared.json.rungs.map((r) => BigInt(r.price));
      const bottom = prices[0];
      const top = prices[prices.length - 1];
      const probe = () => {
        const lo = Math.max(1, Number(bottom) / 2);
        const hi = Math.max(lo * 2, Number(top) * 1.25);
        return BigInt(Math.round(lo * (hi / lo) ** rand()));
      };
      const singles: [Kind, bigint][] = [
        ["recommended", recommended],
        ["top", top],
        ["p75", rpf.p75],
        ["probe", probe()],
        ["probe", probe()],
      ];
      const scored = round >= warm;
      if (scenario === "jump" && scored && stale[segment] !== undefined) singles.push(["stale", stale[segment]!]);
      if (scenario === "jump" && !scored) stale[segment] = recommended;
      const [rungWires, singleWires] = await Promise.all([
        Promise.all(
          prepared.json.rungs.map(async (rung) => {
            const tx = getTransactionDecoder().decode(Buffer.from(rung.transaction, "base64"));
            return new Uint8Array(getTransactionEncoder().encode(await signTransaction([payer(0).keyPair], tx)));
          }),
        ),
        Promise.all(
          singles.map(async ([, price], i) =>
            wireOf(
              await signTransactionMessageWithSigners(transfer(payer(i + 1), to(i + 1), units, price, !hot, loaded)),
            ),
          ),
        ),
      ]);
      const roundSlot = await rpc.getSlot({ commitment: "processed" }).send();
      const record = (kind: Kind, price: bigint, signature: string): Send => ({
        kind,
        hot,
        scored,
        round,
        roundSlot,
        price,
        units,
        signature,
      });
      await Promise.all([
        post<{ id?: string }>(stack, "/transactions/ladder", {
          transactions: rungWires.map(b64),
          deadlineSlots: DEADLINE,
        }).then(({ ok, json }) => {
          if (!ok || json.id === undefined) {
            log(`round ${round}: SendLadder refused: ${JSON.stringify(json).slice(0, 200)}`);
            return;
          }
          sends.push({
            ...record("ladder", 0n, json.id),
            shape: shapeOf(rungWires[0]),
            rungs: rungWires.map((wire, i) => ({ signature: signatureOf(wire), price: prices[i] })),
          });
        }),
        ...singles.map(([kind, price], i) =>
          post<{ signature?: string }>(stack, "/transactions/send", {
            transaction: b64(singleWires[i]),
            confirm: false,
            skipPreflight: true,
          }).then(({ ok, json }) => {
            if (ok && json.signature)
              sends.push({ ...record(kind, price, json.signature), shape: shapeOf(singleWires[i]) });
          }),
        ),
      ]);
      if ((round + 1) % 10 === 0) log(`${round + 1} rounds sent`);
    }
    const lastSlot = sends.reduce((m, s) => (s.roundSlot > m ? s.roundSlot : m), 0n);
    log("waiting for every ladder to end");
    const ladders = sends.filter((s) => s.kind === "ladder");
    const until = Date.now() + 180_000;
    for (const ladder of ladders) {
      for (;;) {
        const res = await fetch(`${stack.base}/transactions/ladder/${ladder.signature}`, { headers: stack.headers });
        const json = (await res.json()) as { status?: string; rungs?: { submittedSlot?: unknown }[] };
        ladder.record = json;
        if (json.status !== undefined && json.status !== "pending" && json.status !== "landed") {
          ladder.state = json.status;
          ladder.submitted = json.rungs?.filter(
            (r) => r.submittedSlot !== undefined && r.submittedSlot !== null,
          ).length;
          break;
        }
        if (Date.now() > until) {
          ladder.state = json.status ?? "unknown";
          break;
        }
        await sleep(500);
      }
    }
    for (;;) {
      const tip = await rpc.getSlot({ commitment: "confirmed" }).send();
      if (tip > lastSlot + BigInt(DEADLINE) + 4n) break;
      await sleep(400);
    }
    // Where everything landed, read from the chain (history searched): the single sends and every rung.
    const lookups: { send: Send; rung?: number; signature: string }[] = sends.flatMap((send) =>
      send.rungs === undefined
        ? [{ send, signature: send.signature }]
        : send.rungs.map((rung, i) => ({ send, rung: i, signature: rung.signature })),
    );
    for (let from = 0; from < lookups.length; from += 256) {
      const chunk = lookups.slice(from, from + 256);
      const { value } = await rpc
        .getSignatureStatuses(
          chunk.map((l) => l.signature as Signature),
          { searchTransactionHistory: true },
        )
        .send();
      value.forEach((status, j) => {
        if (status === null) return;
        const { send, rung } = chunk[j];
        if (rung === undefined) {
          send.landedSlot = status.slot;
          return;
        }
        send.onChain = (send.onChain ?? 0) + 1;
        if (send.landedSlot === undefined || status.slot < send.landedSlot) {
          send.landedSlot = status.slot;
          send.landedRung = rung;
          send.price = send.rungs![rung].price;
        }
      });
    }
    return sends;
  } finally {
    await stack.stop();
  }
}

/** The first signature of a wire transaction (a ladder's rungs are named by it). */
const signatureOf = (wire: Uint8Array) => bs58.encode(wire.subarray(1, 65));

const landedWithin = (s: Send) => s.landedSlot !== undefined && s.landedSlot - s.roundSlot <= BigInt(DEADLINE);

interface Row {
  scenario: string;
  segment: string;
  kind: Kind;
  n: number;
  landed: number;
  medianFee: bigint | undefined;
  p90Fee: bigint | undefined;
  /** Median lamports paid: the 5,000 base fee and the priority fee (price x limit, rounded up). */
  medianLamports: bigint | undefined;
  /** Median price bid, landed or not (single sends). */
  medianBid: bigint;
  hindsight: bigint | undefined;
  slots: { median: bigint | undefined; p90: bigint | undefined };
}

/**
 * A single send's price moved to the rung price of the same scheduler priority (reward / cost, agave's formula:
 * `priorityOf` in transaction-cost.ts): the rung costs a block one write lock more (its nonce account), so where half
 * the signature fee is most of the reward it needs a higher price to rank where the single send ranked. A fair
 * reading where the blocks rank by priority (a contended account), and a pessimistic one where they take everything.
 */
function inRungTerms(single: Send, rung: CostShape | undefined): bigint {
  // A send that bid 0 matched no one's priority: where 0 lands, the blocks took every priority, and so would a rung.
  if (rung === undefined || single.shape === undefined || single.price === 0n) return single.price;
  return priorityScaleOf(rung).priceAtLeast(priorityScaleOf(single.shape).priorityOf(single.price));
}

function rows(
  scenario: string,
  sends: Send[],
): { rows: Row[]; hindsight: Record<string, bigint | undefined>; rungTerms: Record<string, bigint | undefined> } {
  const out: Row[] = [];
  const hindsight: Record<string, bigint | undefined> = {};
  const rungTerms: Record<string, bigint | undefined> = {};
  for (const hot of [false, true]) {
    const segment = hot ? "hot account" : "off it";
    const mine = sends.filter((s) => s.scored && s.hot === hot);
    const singles = mine.filter((s) => s.kind !== "ladder");
    const minGroup = Math.min(30, Math.ceil(singles.length / 8));
    const h = hindsightCheapest(
      singles.map((s) => ({ price: s.price, landed: landedWithin(s) })),
      minGroup,
    );
    hindsight[segment] = h;
    const rung = mine.find((s) => s.kind === "ladder")?.shape;
    rungTerms[segment] = hindsightCheapest(
      singles.map((s) => ({ price: inRungTerms(s, rung), landed: landedWithin(s) })),
      minGroup,
    );
    for (const kind of REPORTED) {
      const of = mine.filter((s) => s.kind === kind);
      if (of.length === 0) continue;
      const landed = of.filter(landedWithin);
      const paid = of.filter((s) => s.landedSlot !== undefined);
      const fees = paid.map((s) => s.price);
      const lamportsPaid = paid.map((s) => 5_000n + (s.price * BigInt(s.units) + 999_999n) / 1_000_000n);
      const slots = landed.map((s) => s.landedSlot! - s.roundSlot);
      out.push({
        scenario,
        segment,
        kind,
        n: of.length,
        landed: landed.length / of.length,
        medianFee: fees.length === 0 ? undefined : median(fees),
        p90Fee: percentile(fees, 90),
        medianLamports: lamportsPaid.length === 0 ? undefined : median(lamportsPaid),
        medianBid: median(of.map((s) => s.price)),
        hindsight: h,
        slots: { median: slots.length === 0 ? undefined : median(slots), p90: percentile(slots, 90) },
      });
    }
  }
  return { rows: out, hindsight, rungTerms };
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
/**
 * A ratio of two prices. Where the market clears at 0 the denominator can be 0 µL/CU while the ladder, whose bottom
 * rung is never 0 (issue 37: "the cheapest price with meaningful odds, not zero"), pays 1: a price of 0 in a
 * denominator counts as 1 µL/CU, the cheapest non-zero bid, and the ratio is marked `*` (the median lamports column
 * shows what it is in lamports: 5,001 against 5,000). The done-when checks use the same rule.
 */
const ratioOf = (a: bigint | undefined, b: bigint | undefined): number | undefined =>
  a === undefined || b === undefined ? undefined : Number(a) / Number(b === 0n ? 1n : b);
const ratio = (a: bigint | undefined, b: bigint | undefined) => {
  const r = ratioOf(a, b);
  return r === undefined ? "n/a" : `${r.toFixed(2)}${b === 0n ? "*" : ""}`;
};

function print(scenario: string, sends: Send[]): { met: Record<string, boolean>; twoOnChain: number } {
  const { rows: table, hindsight, rungTerms } = rows(scenario, sends);
  const ladders = sends.filter((s) => s.kind === "ladder" && s.scored);
  const twoOnChain = sends.filter((s) => s.kind === "ladder" && (s.onChain ?? 0) > 1).length;
  console.log(`\n### ${scenario}\n`);
  console.log(
    `hindsight-cheapest fee that landed 90% within ${DEADLINE} slots (single sends): off the hot account ${hindsight["off it"] ?? "n/a"}, on it ${hindsight["hot account"] ?? "n/a"} µL/CU; in the rung's terms (each single send's price moved to the rung price of the same scheduler priority: the rung also write-locks its nonce): off ${rungTerms["off it"] ?? "n/a"}, on it ${rungTerms["hot account"] ?? "n/a"} µL/CU\n`,
  );
  console.log(
    `| segment | send | n | landed within ${DEADLINE} | median fee (µL/CU) | p90 fee | median lamports | median / hindsight | median / recommended's | slots to land (median, p90) |`,
  );
  console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
  for (const row of table) {
    const rec = table.find((r) => r.segment === row.segment && r.kind === "recommended");
    console.log(
      `| ${row.segment} | ${KIND_NAMES[row.kind]} | ${row.n} | ${pct(row.landed)} | ${row.medianFee ?? (row.kind === "ladder" ? "-" : `- (bid ${row.medianBid})`)} | ${row.p90Fee ?? "-"} | ${row.medianLamports ?? "-"} | ${ratio(row.medianFee, row.hindsight)} | ${ratio(row.medianFee, rec?.medianFee)} | ${row.slots.median ?? "-"}, ${row.slots.p90 ?? "-"} |`,
    );
  }
  const count = (values: (number | string | undefined)[]) => {
    const counts = new Map<string, number>();
    for (const v of values) counts.set(String(v ?? "-"), (counts.get(String(v ?? "-")) ?? 0) + 1);
    return [...counts]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, n]) => `${k}: ${n}`)
      .join(", ");
  };
  console.log(
    `\nladders: ${ladders.length} scored; final states {${count(ladders.map((l) => l.state))}}; rungs submitted {${count(ladders.map((l) => l.submitted))}}; landed rung {${count(ladders.map((l) => l.landedRung))}}; **ladders with more than one rung on chain: ${twoOnChain}** (of ${sends.filter((s) => s.kind === "ladder").length}, unscored included)`,
  );
  // Why everything lands at 0 off the hot account: the room full blocks leave under the block limit.
  const packed = [...(packings.get(scenario)?.values() ?? [])];
  if (packed.length > 0) {
    const room = packed.map((p) => BigInt(p.blockCostLimit) - BigInt(p.cost));
    const share = (least: bigint) => pct(room.filter((r) => r >= least).length / room.length);
    console.log(
      `blocks (the newest at each round, ${packed.length}): cost ${pct(Number(median(packed.map((p) => BigInt(p.cost)))) / Number(packed[0].blockCostLimit))} of the limit (median); room left under it median ${median(room)} CU, p10 ${percentile(room, 10)} CU; blocks with room for 20,000 CU (more than a plain transfer costs: its ~1,700-CU limit, signatures, write locks, loaded-data cost; the hot-account sends): ${share(20_000n)}; for 220,000 CU (a 200,000-CU send${OFF_UNITS > 0 ? `, as the off-hot sends: ${OFF_UNITS} CU` : ""}): ${share(220_000n)}`,
    );
  }
  // The ladder's own frame: its deadline counts from its first submission (Solgate's processed slot then).
  for (const hot of [false, true]) {
    const mine = ladders.filter((l) => l.hot === hot);
    const own = mine.filter((l) => {
      const deadline = (l.record as { deadlineSlot?: number | string } | undefined)?.deadlineSlot;
      return l.landedSlot !== undefined && deadline !== undefined && l.landedSlot <= BigInt(deadline);
    });
    const late = mine.filter((l) => l.landedSlot !== undefined && !landedWithin(l)).length;
    console.log(
      `${hot ? "hot account" : "off it"}: ladders landed within their own deadline (from the first submission): ${mine.length === 0 ? "n/a" : pct(own.length / mine.length)}; landed after the bench's deadline: ${late}`,
    ); // The median hides a headroom rung paid by a few (ladder-plan.ts HEADROOM): count them, and compare mean fees.
    const headroom = mine.filter(
      (l) =>
        l.rungs !== undefined &&
        l.landedRung === l.rungs.length - 1 &&
        hasHeadroom(l.rungs.map((rung) => BigInt(rung.price))),
    );
    const meanLamports = (list: Send[]) => {
      const paid = list.filter((s) => s.landedSlot !== undefined);
      if (paid.length === 0) return undefined;
      const total = paid.reduce((sum, s) => sum + 5_000n + (s.price * BigInt(s.units) + 999_999n) / 1_000_000n, 0n);
      return total / BigInt(paid.length);
    };
    const recommended = sends.filter((s) => s.scored && s.hot === hot && s.kind === "recommended");
    console.log(
      `${hot ? "hot account" : "off it"}: ladders that landed their headroom rung (a top >= 4 x the rung under it): ${headroom.length} of ${mine.length}; mean lamports paid: ladder ${meanLamports(mine) ?? "-"}, recommended ${meanLamports(recommended) ?? "-"} (ratio ${ratio(meanLamports(mine), meanLamports(recommended))})`,
    );
  }
  // The same prices as priority fees in lamports (price x limit, rounded up, as the runtime charges): where the market
  // clears near 0 a price ratio of small numbers (15 against 1 µL/CU) is a few lamports.
  for (const segment of ["off it", "hot account"]) {
    const of = sends.filter((s) => s.scored && s.hot === (segment === "hot account"));
    const units = of[0]?.units;
    if (units === undefined) continue;
    const fee = (price: bigint | undefined) =>
      price === undefined ? "-" : String((price * BigInt(units) + 999_999n) / 1_000_000n);
    const get = (kind: Kind) => table.find((r) => r.segment === segment && r.kind === kind)?.medianFee;
    console.log(
      `${segment}: priority fee in lamports at a ${units}-CU limit (median): ladder ${fee(get("ladder"))}, recommended ${fee(get("recommended"))}, at the hindsight price ${fee(hindsight[segment])}`,
    );
  }
  const met: Record<string, boolean> = {};
  for (const segment of ["off it", "hot account"]) {
    const get = (kind: Kind) => table.find((r) => r.segment === segment && r.kind === kind);
    const ladder = get("ladder");
    const top = get("top");
    const rec = get("recommended");
    if (ladder === undefined || top === undefined || rec === undefined) continue;
    const reliable = ladder.landed >= 0.95 && ladder.landed >= top.landed - 0.02;
    const toRec = ratioOf(ladder.medianFee, rec.medianFee);
    const toHindsight = ratioOf(ladder.medianFee, ladder.hindsight);
    const cheapRec = toRec !== undefined && toRec <= 1;
    const cheapHindsight = toHindsight !== undefined && toHindsight <= 1.1;
    // The flat-curve check (congested, off the hot account) asks for a flat curve: where recommended is 0 the market
    // cleared at 0 and there is no curve to be flat (docs/benchmarks.md says why).
    const flat =
      scenario !== "congested" || segment !== "off it" || rec.medianFee === 0n
        ? undefined
        : toRec !== undefined && toRec <= 0.6;
    const yes = (b: boolean | undefined) => (b === undefined ? "-" : b ? "met" : "NOT met");
    const toRungTerms = ratioOf(ladder.medianFee, rungTerms[segment]);
    console.log(
      `${segment}: reliable (>= 95%, within 2 points of the top rung's ${pct(top.landed)}): ${yes(reliable)}; median <= recommended's: ${yes(cheapRec)}; <= 1.1 x hindsight: ${yes(cheapHindsight)} (in the rung's terms: ${toRungTerms === undefined ? "n/a" : `${toRungTerms.toFixed(2)} x, ${yes(toRungTerms <= 1.1)}`})${scenario === "congested" && segment === "off it" ? `; <= 0.6 x recommended's where the curve is flat: ${flat === undefined ? "n/a (recommended is 0: the market cleared at 0)" : yes(flat)}` : ""}`,
    );
    met[`${segment} reliable`] = reliable;
    met[`${segment} cheap`] = cheapRec && cheapHindsight && flat !== false;
  }
  return { met, twoOnChain };
}

console.log(
  `fee ladder bench: --n ${N} rounds per scenario, ${DEADLINE}-slot deadline, ${RUNGS} rungs (${new Date().toISOString()})`,
);
let twoTotal = 0;
let allMet = true;
for (const [i, scenario] of SCENARIOS.entries()) {
  const sends = await runScenario(scenario, 3700 + i);
  const { met, twoOnChain } = print(scenario, sends);
  twoTotal += twoOnChain;
  if (Object.values(met).some((b) => !b)) allMet = false;
  if (args.dump) {
    mkdirSync(args.dump, { recursive: true });
    writeFileSync(
      `${args.dump}/ladder-${scenario}.json`,
      JSON.stringify(sends, (_, v: unknown) => (typeof v === "bigint" ? Number(v) : v)),
    );
  }
}
console.log(`\nnever two: ${twoTotal} ladders put more than one rung on chain (target 0)`);
console.log(`reliable and cheap on every scenario and segment: ${allMet ? "yes" : "no"}`);
process.exit(0);
