/**
 * The demo page's fee-ladder panel: the landing curve the ladder prices its rungs from (EstimateFees with
 * `curve_points`: the odds of landing within the ladder's window at each price, redrawn every few seconds), and a
 * ladder followed live with WatchLadder: each rung's price, its odds on the current curve, the slot it was sent at,
 * and its state, with the rungs drawn as dots on the curve in their state's color.
 *
 * The page signs nothing: a browser page holding a key (even a throwaway one) has no way to fund it on the
 * gateway's API, and should not. It watches ladders that clients send (the examples print their ids), given by id
 * or as `?ladder=`.
 */
import { LadderStatus, RungState } from "../../../gen/solgate/v1/ladder_pb.js";
import type { LadderRecord } from "../../../gen/solgate/v1/ladder_pb.js";
import type { OddsPoint } from "../../../gen/solgate/v1/fee_pb.js";
import { describeError } from "./solgate-client.ts";
import type { SolgateClients } from "./solgate-client.ts";

const SVG = "http://www.w3.org/2000/svg";
const WIDTH = 600;
const HEIGHT = 180;
const PAD = { left: 40, right: 8, top: 8, bottom: 20 };
const STATE_COLORS: Record<string, string> = {
  WAITING: "#9aa1ab",
  SUBMITTED: "#e8a33d",
  LANDED: "#2e9e5b",
  DEAD: "#d64545",
};
/** The window of the curve when no ladder is watched: PrepareLadder's default deadline. */
const DEFAULT_WINDOW = 20;

/** The elements the panel fills. */
export interface LadderPanelElements {
  curve: SVGSVGElement;
  status: HTMLElement;
  rungs: HTMLTableElement;
  form: HTMLFormElement;
  input: HTMLInputElement;
}

/**
 * A transfer between two fixed addresses, unsigned: the draft the curve is asked for. Its accounts are nobody's hot
 * accounts, so the curve is the market's at large (a ladder on a hot account faces a steeper one).
 */
function placeholderDraft(): Uint8Array {
  const message = [1, 0, 1, 3, ...new Array(32).fill(7), ...new Array(32).fill(9), ...new Array(32).fill(0)];
  message.push(...new Array(32).fill(0), 1, 2, 2, 0, 1, 12, 2, 0, 0, 0, 64, 66, 15, 0, 0, 0, 0, 0);
  return Uint8Array.from([1, ...new Array(64).fill(0), ...message]);
}

/** The odds at `price` on `curve` (linear between its points; 0 below it, the last point's odds above it). */
export function oddsOn(curve: readonly OddsPoint[], price: bigint): number | undefined {
  if (curve.length === 0) return undefined;
  if (price <= curve[0].price) return price === curve[0].price ? curve[0].odds : 0;
  for (let i = 1; i < curve.length; i++) {
    const a = curve[i - 1];
    const b = curve[i];
    if (price <= b.price) return a.odds + ((b.odds - a.odds) * Number(price - a.price)) / Number(b.price - a.price);
  }
  return curve[curve.length - 1].odds;
}

/** Starts the panel: the curve at once and every `refreshMs`; a ladder whenever one is asked for. */
export function createLadderPanel(els: LadderPanelElements, clients: () => SolgateClients, refreshMs = 2000) {
  let curve: OddsPoint[] = [];
  let ladder: LadderRecord | undefined;
  let watching: AbortController | undefined;
  const draft = placeholderDraft();
  const windowSlots = () =>
    ladder === undefined ? DEFAULT_WINDOW : Math.max(1, Math.min(150, Number(ladder.deadlineSlot - ladder.firstSlot)));

  function draw(): void {
    const svg = els.curve;
    svg.setAttribute("viewBox", `0 0 ${WIDTH} ${HEIGHT}`);
    svg.replaceChildren();
    const prices = [...curve.map((p) => p.price), ...(ladder?.rungs.map((r) => r.price) ?? [])];
    if (prices.length === 0) return;
    // Prices span decades: a log scale, from the cheapest shown to the dearest.
    const low = Math.log10(1 + Number(prices.reduce((a, b) => (a < b ? a : b))));
    const high = Math.max(low + 1e-9, Math.log10(1 + Number(prices.reduce((a, b) => (a > b ? a : b)))));
    const x = (price: bigint) =>
      PAD.left + ((Math.log10(1 + Number(price)) - low) / (high - low)) * (WIDTH - PAD.left - PAD.right);
    const y = (odds: number) => PAD.top + (1 - odds) * (HEIGHT - PAD.top - PAD.bottom);
    const text = (content: string, tx: number, ty: number, anchor = "end") => {
      const t = document.createElementNS(SVG, "text");
      for (const [k, v] of Object.entries({ x: tx, y: ty, "text-anchor": anchor, "font-size": 10 }))
        t.setAttribute(k, String(v));
      t.textContent = content;
      svg.append(t);
    };
    text("100%", PAD.left - 4, PAD.top + 8);
    text("0%", PAD.left - 4, HEIGHT - PAD.bottom);
    text(`${prices.reduce((a, b) => (a < b ? a : b)).toLocaleString()} µL/CU`, PAD.left, HEIGHT - 4, "start");
    text(`${prices.reduce((a, b) => (a > b ? a : b)).toLocaleString()} µL/CU`, WIDTH - PAD.right, HEIGHT - 4);
    if (curve.length > 0) {
      const line = document.createElementNS(SVG, "polyline");
      line.setAttribute("points", curve.map((p) => `${x(p.price).toFixed(1)},${y(p.odds).toFixed(1)}`).join(" "));
      line.setAttribute("fill", "none");
      line.setAttribute("stroke", "#3a7bd5");
      line.setAttribute("stroke-width", "2");
      line.dataset.line = "curve";
      svg.append(line);
    }
    for (const [i, rung] of (ladder?.rungs ?? []).entries()) {
      const state = RungState[rung.state];
      const dot = document.createElementNS(SVG, "circle");
      for (const [k, v] of Object.entries({ cx: x(rung.price), cy: y(oddsOn(curve, rung.price) ?? 0), r: 5 }))
        dot.setAttribute(k, v.toFixed(1));
      dot.setAttribute("fill", STATE_COLORS[state] ?? "#000");
      dot.dataset.rung = String(i);
      dot.dataset.state = state;
      svg.append(dot);
    }
  }

  function show(record: LadderRecord): void {
    ladder = record;
    const status = LadderStatus[record.status];
    els.status.dataset.status = status;
    const landed =
      record.landedRung === undefined
        ? ""
        : `: rung ${record.landedRung} landed in slot ${record.slot}, ${record.priceLanded} µL/CU, fee ${record.feePaidLamports} lamports, ${record.slotsToLand} slots after the first submission` +
          (record.overpayRatio === undefined ? "" : `, ${record.overpayRatio.toFixed(2)}× the cheapest that landed`);
    els.status.textContent = `${status}${landed} (slots ${record.firstSlot} to ${record.deadlineSlot})`;
    const header = document.createElement("tr");
    for (const label of ["rung", "price (µL/CU)", `odds within ${windowSlots()} slots`, "sent at slot", "state"])
      header.append(Object.assign(document.createElement("th"), { textContent: label }));
    const rows = record.rungs.map((rung, i) => {
      const tr = document.createElement("tr");
      const odds = oddsOn(curve, rung.price);
      const state = RungState[rung.state];
      tr.dataset.state = state;
      for (const value of [
        String(i),
        rung.price.toLocaleString(),
        odds === undefined ? "-" : `${(odds * 100).toFixed(0)}%`,
        rung.submittedSlot === undefined ? "-" : String(rung.submittedSlot),
        state,
      ])
        tr.append(Object.assign(document.createElement("td"), { textContent: value }));
      return tr;
    });
    els.rungs.replaceChildren(header, ...rows);
    draw();
  }

  async function refreshCurve(): Promise<void> {
    try {
      const { estimate } = await clients().fees.estimateFees({
        transaction: draft,
        withinSlots: windowSlots(),
        curvePoints: 16,
      });
      curve = estimate?.oddsAnswer?.curve ?? [];
      els.curve.dataset.points = String(curve.length);
      if (ladder === undefined) draw();
      else show(ladder);
    } catch (e) {
      els.curve.dataset.error = describeError(e).code;
    }
  }

  function watch(id: string): void {
    watching?.abort();
    const controller = (watching = new AbortController());
    ladder = undefined;
    els.rungs.replaceChildren();
    els.status.dataset.status = "";
    els.status.textContent = `watching ladder ${id}`;
    void (async () => {
      try {
        for await (const ev of clients().transactions.watchLadder({ id }, { signal: controller.signal }))
          if (ev.event.case === "ladder") show(ev.event.value);
        // The stream ends once the ladder is final; the curve now uses its window.
        void refreshCurve();
      } catch (e) {
        if (controller.signal.aborted) return;
        const error = describeError(e);
        els.status.dataset.status = "error";
        els.status.textContent = `error: ${error.code}${error.reason ? ` (${error.reason})` : ""}: ${error.message}`;
      }
    })();
  }

  els.form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const id = els.input.value.trim();
    if (id !== "") watch(id);
  });
  void refreshCurve();
  setInterval(() => void refreshCurve(), refreshMs);
  return { watch };
}
