/**
 * The demo page's collection-feed panel: a collection's changes as WatchCollection streams them (newest first),
 * and its verified size over time, as a step line from GetCollection's count and each event's `verified_size`.
 * After an error (a restart, a dropped connection) the watch resumes from the cursor of the last event shown, as a
 * client should; a cursor the gateway no longer holds starts it over from now.
 */
import { CollectionEventKind } from "../../../gen/solgate/v1/collection_event_pb.js";
import type { CollectionEvent } from "../../../gen/solgate/v1/collection_event_pb.js";
import { describeError } from "./solgate-client.ts";
import type { SolgateClients } from "./solgate-client.ts";

const SVG = "http://www.w3.org/2000/svg";
const WIDTH = 600;
const HEIGHT = 140;
const PAD = { left: 40, right: 8, top: 8, bottom: 20 };
/** Events listed at most; the size line keeps every point. */
const LISTED = 30;

/** The elements the panel fills. */
export interface FeedPanelElements {
  title: HTMLElement;
  size: HTMLElement;
  chart: SVGSVGElement;
  events: HTMLOListElement;
  heartbeat: HTMLElement;
  form: HTMLFormElement;
  input: HTMLInputElement;
}

/** One point of the size line. */
interface SizePoint {
  at: number;
  size: bigint;
}

/** What an event says, in a line. */
function describe(event: CollectionEvent): string {
  const kind = CollectionEventKind[event.kind];
  if (event.kind === CollectionEventKind.FLOOR_CHANGED)
    return `#${event.sequence} ${kind}: floor ${event.floorPrice?.sol ?? "none"} SOL (was ${event.previousFloorPrice?.sol ?? "none"})`;
  const owner = event.owner === "" ? "" : `, owner ${event.owner}`;
  return `#${event.sequence} ${kind}: ${event.assetId}${owner} (${event.instruction}, slot ${event.slot})`;
}

/** Starts the panel on a collection; `watch` moves it to another. */
export function createFeedPanel(els: FeedPanelElements, clients: () => SolgateClients) {
  let points: SizePoint[] = [];
  let current: AbortController | undefined;

  function draw(): void {
    const svg = els.chart;
    svg.setAttribute("viewBox", `0 0 ${WIDTH} ${HEIGHT}`);
    svg.replaceChildren();
    if (points.length === 0) return;
    const now = Date.now();
    const first = points[0].at;
    const span = Math.max(1000, now - first);
    let low = points[0].size;
    let high = points[0].size;
    for (const p of points) {
      if (p.size < low) low = p.size;
      if (p.size > high) high = p.size;
    }
    // A flat line sits mid-height, with a member of room either side.
    const bottom = low > 0n ? low - 1n : 0n;
    const top = high + 1n;
    const x = (at: number) => PAD.left + ((at - first) / span) * (WIDTH - PAD.left - PAD.right);
    const y = (size: bigint) =>
      PAD.top + (1 - Number(size - bottom) / Number(top - bottom)) * (HEIGHT - PAD.top - PAD.bottom);
    const coords: string[] = [];
    points.forEach((p, i) => {
      const until = i + 1 < points.length ? points[i + 1].at : now;
      coords.push(`${x(p.at).toFixed(1)},${y(p.size).toFixed(1)}`, `${x(until).toFixed(1)},${y(p.size).toFixed(1)}`);
    });
    const line = document.createElementNS(SVG, "polyline");
    line.setAttribute("points", coords.join(" "));
    line.setAttribute("fill", "none");
    line.setAttribute("stroke", "#2e9e5b");
    line.setAttribute("stroke-width", "2");
    line.dataset.line = "verified-size";
    svg.append(line);
    const text = (content: string, tx: number, ty: number, anchor = "end") => {
      const t = document.createElementNS(SVG, "text");
      for (const [k, v] of Object.entries({ x: tx, y: ty, "text-anchor": anchor, "font-size": 10 }))
        t.setAttribute(k, String(v));
      t.textContent = content;
      svg.append(t);
    };
    text(String(top), PAD.left - 4, PAD.top + 8);
    text(String(bottom), PAD.left - 4, HEIGHT - PAD.bottom);
    text(new Date(first).toLocaleTimeString(), PAD.left, HEIGHT - 4, "start");
    text(new Date(now).toLocaleTimeString(), WIDTH - PAD.right, HEIGHT - 4);
  }

  function record(size: bigint): void {
    points.push({ at: Date.now(), size });
    els.size.textContent = `${size} verified members`;
    els.size.dataset.size = String(size);
    draw();
  }

  function add(event: CollectionEvent): void {
    const item = Object.assign(document.createElement("li"), {
      textContent: `${new Date().toLocaleTimeString()}  ${describe(event)}; verified size ${event.verifiedSize}`,
    });
    item.dataset.kind = CollectionEventKind[event.kind];
    item.dataset.sequence = String(event.sequence);
    els.events.prepend(item);
    while (els.events.children.length > LISTED) els.events.lastElementChild?.remove();
    record(event.verifiedSize);
  }

  async function follow(address: string, signal: AbortSignal): Promise<void> {
    let cursor = "";
    while (!signal.aborted) {
      try {
        for await (const message of clients().collections.watchCollection({ address, cursor }, { signal })) {
          if (message.message.case === "event") {
            add(message.message.value);
            cursor = message.message.value.cursor;
          } else if (message.message.case === "heartbeat") {
            els.heartbeat.textContent = `heartbeat at slot ${message.message.value.slot}`;
          }
        }
      } catch (e) {
        if (signal.aborted) return;
        const error = describeError(e);
        els.heartbeat.textContent = `error: ${error.code}${error.reason ? ` (${error.reason})` : ""}: ${error.message}`;
        // A refused address or cursor will be refused again: start over from now, or stop.
        if (error.reason === "COLLECTION_CURSOR_EXPIRED") cursor = "";
        else if (error.code === "invalid_argument" || error.code === "not_found") return;
      }
      await new Promise((r) => setTimeout(r, 2000));
    }
  }

  function watch(address: string): void {
    current?.abort();
    const controller = (current = new AbortController());
    points = [];
    els.events.replaceChildren();
    els.heartbeat.textContent = "";
    els.title.textContent = address;
    void (async () => {
      try {
        // The starting size: the collection as read now; each event then carries the size after it.
        const { collection } = await clients().collections.getCollection({ address }, { signal: controller.signal });
        els.title.textContent = `${collection?.name ?? "?"} (${address})`;
        record(collection?.itemCount ?? 0n);
      } catch (e) {
        if (controller.signal.aborted) return;
        const error = describeError(e);
        els.heartbeat.textContent = `error: ${error.code}${error.reason ? ` (${error.reason})` : ""}: ${error.message}`;
        return;
      }
      await follow(address, controller.signal);
    })();
  }

  els.form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const address = els.input.value.trim();
    if (address !== "") watch(address);
  });
  // The time axis moves on while nothing happens.
  setInterval(draw, 5000);
  return { watch };
}
