/**
 * The demo page: a small live view of a Solgate gateway — the fee levels as they move (a WatchFees
 * stream: a table of the current estimate and a chart of the four levels and `recommended` over the
 * last 150 slots, fee-chart.ts), and a transaction's status as it moves (a WatchStatus stream, shown as a
 * timeline of its states with slots and times), a fee ladder climbing on the landing curve (ladder-panel.ts), and a
 * collection's change feed with its verified size over time (feed-panel.ts). With `?auto=1` it runs a fixed script once instead (fees,
 * the first WatchFees estimate, a page of program accounts, two error probes, a watch followed to its
 * end) and publishes what it got as `window.solgateReport`; the interop test reads that.
 *
 * URL parameters: `server` (default: this origin), `key`, `protocol` (`connect` | `grpcweb`),
 * `signature` (watch at once), `ladder` (a ladder id to watch at once), `collection` (the collection whose feed to
 * show; default the localnet's seeded one), `program`, `size`, `match` (the program-account query), `auto`.
 */
import { FeeSource } from "../../../gen/solgate/v1/fee_pb.js";
import type { FeeEstimate } from "../../../gen/solgate/v1/fee_pb.js";
import { DataFormat } from "../../../gen/solgate/v1/program_pb.js";
import { TransactionStatus } from "../../../gen/solgate/v1/transaction_pb.js";
import type { WatchStatusResponse } from "../../../gen/solgate/v1/transaction_service_pb.js";
import { TOKEN_PROGRAM } from "../../solana/program-ids.ts";
import { createFeeChart, FEE_LINES } from "./fee-chart.ts";
import { createFeedPanel } from "./feed-panel.ts";
import { createLadderPanel } from "./ladder-panel.ts";
import { createSolgateClients, describeError } from "./solgate-client.ts";
import type { BrowserProtocol, SolgateClients } from "./solgate-client.ts";

const params = new URLSearchParams(location.search);
const settings = {
  server: params.get("server") ?? location.origin,
  key: params.get("key") ?? localStorage.getItem("solgate-demo-key") ?? "",
  protocol: (params.get("protocol") === "grpcweb" ? "grpcweb" : "connect") as BrowserProtocol,
  program: params.get("program") ?? TOKEN_PROGRAM,
  size: params.get("size") ?? "82",
  match: params.getAll("match"),
  // The embedded localnet's seeded collection (its world's seed is fixed).
  collection: params.get("collection") ?? "8HV7NUeYyk2B4P5VY8qjptse9VaZ3J8qRq6W3NVB5NSJ",
};

const $ = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T;

function clients(key = settings.key): SolgateClients {
  return createSolgateClients({ baseUrl: settings.server, protocol: settings.protocol, apiKey: key });
}

/** A fee estimate as plain JSON (bigints as decimal strings). */
function feeSummary(est: FeeEstimate | undefined) {
  return {
    source: FeeSource[est?.source ?? 0],
    lamportsPerSignature: String(est?.baseFee?.lamportsPerSignature),
    lamportsPerSignatureType: typeof est?.baseFee?.lamportsPerSignature,
    slot: String(est?.slot),
    updatedAt:
      est?.updatedAt === undefined
        ? null
        : new Date(Number(est.updatedAt.seconds) * 1000 + est.updatedAt.nanos / 1e6).toISOString(),
    levels:
      est?.priority === undefined
        ? null
        : Object.fromEntries(
            (["low", "medium", "high", "veryHigh", "recommended"] as const).map((k) => [k, String(est.priority?.[k])]),
          ),
    // The odds of landing within `withinSlots` slots at each level; null while the gateway cannot estimate them.
    odds:
      est?.priority?.odds === undefined
        ? null
        : {
            withinSlots: est.priority.odds.withinSlots,
            ...Object.fromEntries(
              (["low", "medium", "high", "veryHigh", "recommended"] as const).map((k) => [k, est.priority!.odds![k]]),
            ),
          },
  };
}

/** One stream event as plain JSON. */
function eventSummary(ev: WatchStatusResponse) {
  if (ev.event.case === "heartbeat") return { kind: "heartbeat", slot: String(ev.event.value.slot) };
  if (ev.event.case === "record") {
    const r = ev.event.value;
    return {
      kind: "record",
      status: TransactionStatus[r.status],
      slot: r.slot === undefined ? null : String(r.slot),
      fee: String(r.fee?.lamports),
    };
  }
  return { kind: "empty" };
}

async function listPrograms(c: SolgateClients) {
  const res = await c.programs.listProgramAccounts({
    programId: settings.program,
    size: settings.size === "" ? undefined : BigInt(settings.size),
    match: settings.match,
    limit: 5,
  });
  return {
    programId: res.programId,
    nextCursor: res.nextCursor ?? null,
    items: res.items.map((a) => ({
      address: a.address,
      lamports: String(a.lamports),
      lamportsType: typeof a.lamports,
      space: String(a.space),
      format: DataFormat[a.data?.format ?? 0],
      mint: a.data?.parsed?.info?.mint ?? null,
      raw: String(a.data?.parsed?.info?.tokenAmount?.raw),
      uiString: a.data?.parsed?.info?.tokenAmount?.uiString ?? null,
    })),
  };
}

/** Follows a watch to its end (or `signal`), calling `onEvent` for each event. */
async function watch(
  c: SolgateClients,
  signature: string,
  onEvent: (e: ReturnType<typeof eventSummary>) => void,
  signal?: AbortSignal,
) {
  for await (const ev of c.transactions.watchStatus({ signature }, { signal })) onEvent(eventSummary(ev));
}

/** The first `count` estimates of a WatchFees stream (the first comes at once), or fewer if `ms` pass first. */
async function watchFees(c: SolgateClients, count: number, ms: number) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), ms);
  const estimates: ReturnType<typeof feeSummary>[] = [];
  try {
    for await (const ev of c.fees.watchFees({}, { signal: controller.signal })) {
      if (ev.event.case === "estimate") estimates.push(feeSummary(ev.event.value));
      if (estimates.length === count) break;
    }
  } catch (e) {
    if (!controller.signal.aborted) throw e;
  } finally {
    clearTimeout(timer);
  }
  return estimates;
}

/** Runs `fn`, turning a thrown error into `{ ok: false, error }`. */
async function attempt<T>(
  fn: () => Promise<T>,
): Promise<{ ok: true; value: T } | { ok: false; error: ReturnType<typeof describeError> }> {
  try {
    return { ok: true, value: await fn() };
  } catch (e) {
    return { ok: false, error: describeError(e) };
  }
}

/** The scripted run the interop test drives. */
async function runScript(): Promise<void> {
  const c = clients();
  const events: ReturnType<typeof eventSummary>[] = [];
  const signature = params.get("signature") ?? "";
  const programs = await attempt(() => listPrograms(c));
  const mint = settings.match.find((m) => m.startsWith("0:"))?.slice(2) ?? "";
  const report = {
    protocol: settings.protocol,
    origin: location.origin,
    server: settings.server,
    fees: await attempt(async () => feeSummary((await c.fees.getFees({})).estimate)),
    feeWatch: await attempt(() => watchFees(c, 2, 5000)),
    programs,
    account: await attempt(async () => {
      const address = programs.ok ? (programs.value.items[0]?.address ?? "") : "";
      const { account } = await c.accounts.getAccount({ address });
      return {
        address: account?.address,
        owner: account?.owner,
        mint: account?.data?.parsed?.info?.mint ?? null,
        raw: String(account?.data?.parsed?.info?.tokenAmount?.raw),
      };
    }),
    holders: await attempt(async () => {
      const page = await c.tokens.listTokenHolders({ mint, limit: 1000, includeZero: true });
      return { mint: page.mint, tokenAccounts: page.items.map((h) => h.tokenAccount) };
    }),
    badAddress: await attempt(async () => void (await c.programs.listProgramAccounts({ programId: "not-an-address" }))),
    noKey: await attempt(
      async () => void (await clients("").programs.listProgramAccounts({ programId: settings.program, limit: 1 })),
    ),
    watch: { ...(await attempt(() => watch(c, signature, (e) => events.push(e)))), events },
  };
  (window as unknown as { solgateReport: unknown }).solgateReport = report;
  $("report").textContent = JSON.stringify(report, null, 2);
  document.body.dataset.state = "done";
}

/** The live view. */
function runLive(): void {
  const keyInput = $<HTMLInputElement>("key");
  keyInput.value = settings.key;
  keyInput.addEventListener("change", () => {
    settings.key = keyInput.value.trim();
    localStorage.setItem("solgate-demo-key", settings.key);
  });
  $("server").textContent = `${settings.server} over ${settings.protocol === "grpcweb" ? "gRPC-Web" : "Connect"}`;

  const chart = createFeeChart($("fee-chart") as unknown as SVGSVGElement);
  const legend = $("fee-legend");
  const legendItems = FEE_LINES.map((name) => {
    const item = document.createElement("li");
    item.textContent = name;
    item.style.setProperty("--swatch", chart.colorOf(name));
    item.dataset.level = name;
    return item;
  });
  legend.replaceChildren(...legendItems);
  const showFees = (est: FeeEstimate) => {
    const summary = feeSummary(est);
    const out = $("fees");
    out.replaceChildren();
    // Each level's landing odds beside it (the chart's legend names the same levels).
    const odds = summary.odds as Record<string, number> | null;
    for (const [k, v] of Object.entries(summary.levels ?? {})) {
      const chance = odds === null ? "" : ` · ${(odds[k] * 100).toFixed(0)}% to land within ${odds.withinSlots} slots`;
      out.append(row(k, `${v} µlamports/CU${chance}`));
    }
    out.append(
      row("base fee", `${summary.lamportsPerSignature} lamports/signature`),
      row("source", summary.source),
      row("slot", summary.slot),
    );
    out.append(row("updated", summary.updatedAt ?? "-"));
    // Beside the chart: each line's newest value and its odds.
    legendItems.forEach((item, i) => {
      const name = FEE_LINES[i];
      const value = summary.levels?.[name] ?? "-";
      const chance = odds === null ? "" : ` · ${(odds[name] * 100).toFixed(0)}%`;
      item.textContent = `${name} ${value}${chance}`;
    });
    const p = est.priority;
    if (p !== undefined)
      chart.add({
        slot: est.slot,
        levels: { low: p.low, medium: p.medium, high: p.high, veryHigh: p.veryHigh, recommended: p.recommended },
      });
  };
  // One WatchFees stream for the page's life; after an error (a wrong key, a restart) it starts again.
  const followFees = async () => {
    for (;;) {
      try {
        for await (const ev of clients().fees.watchFees({})) {
          if (ev.event.case === "estimate") showFees(ev.event.value);
          else if (ev.event.case === "heartbeat")
            $("fee-heartbeat").textContent = `heartbeat at slot ${ev.event.value.slot}`;
        }
      } catch (e) {
        const error = describeError(e);
        const out = $("fees");
        out.replaceChildren(row("error", `${error.code}${error.reason ? ` (${error.reason})` : ""}: ${error.message}`));
      }
      await new Promise((r) => setTimeout(r, 2000));
    }
  };
  void followFees();

  let current: AbortController | undefined;
  const startWatch = (signature: string) => {
    current?.abort();
    const controller = (current = new AbortController());
    const list = $("statuses");
    list.replaceChildren();
    const started = performance.now();
    // The timeline: one entry per state, with its slot, the time it arrived and the time since the watch began.
    const add = (text: string, state?: string) => {
      const elapsed = ((performance.now() - started) / 1000).toFixed(2);
      const item = Object.assign(document.createElement("li"), {
        textContent: `${new Date().toLocaleTimeString()} (+${elapsed} s)  ${text}`,
      });
      if (state !== undefined) item.dataset.state = state;
      list.append(item);
    };
    add(`watching ${signature}`);
    watch(
      clients(),
      signature,
      (e) => {
        if (e.kind === "record") add(`${e.status} slot ${e.slot ?? "-"} fee ${e.fee}`, e.status);
        else if (e.kind === "heartbeat") $("watch-heartbeat").textContent = `heartbeat at slot ${e.slot}`;
      },
      controller.signal,
    )
      .then(() => add("stream ended"))
      .catch((e: unknown) => {
        if (!controller.signal.aborted) add(`error: ${JSON.stringify(describeError(e))}`);
      });
  };
  $("key-form").addEventListener("submit", (ev) => ev.preventDefault());
  $("watch-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const sig = $<HTMLInputElement>("signature").value.trim();
    if (sig !== "") startWatch(sig);
  });
  const initial = params.get("signature");
  if (initial) {
    $<HTMLInputElement>("signature").value = initial;
    startWatch(initial);
  }

  const ladders = createLadderPanel(
    {
      curve: $("ladder-curve") as unknown as SVGSVGElement,
      status: $("ladder-status"),
      rungs: $<HTMLTableElement>("ladder-rungs"),
      form: $<HTMLFormElement>("ladder-form"),
      input: $<HTMLInputElement>("ladder-id"),
    },
    clients,
  );
  const ladder = params.get("ladder");
  if (ladder) {
    $<HTMLInputElement>("ladder-id").value = ladder;
    ladders.watch(ladder);
  }

  const feed = createFeedPanel(
    {
      title: $("feed-title"),
      size: $("feed-size"),
      chart: $("size-chart") as unknown as SVGSVGElement,
      events: $<HTMLOListElement>("feed-events"),
      heartbeat: $("feed-heartbeat"),
      form: $<HTMLFormElement>("feed-form"),
      input: $<HTMLInputElement>("feed-collection"),
    },
    clients,
  );
  $<HTMLInputElement>("feed-collection").value = settings.collection;
  feed.watch(settings.collection);
}

function row(label: string, value: string): HTMLElement {
  const tr = document.createElement("tr");
  tr.append(
    Object.assign(document.createElement("th"), { textContent: label }),
    Object.assign(document.createElement("td"), { textContent: value }),
  );
  return tr;
}

if (params.get("auto") === "1") void runScript();
else runLive();
