/**
 * The demo page's fee chart: the four levels and `recommended` over the last 150 slots, as hand-written
 * SVG (a few polylines; no charting library is worth a dependency for that). Each level is a step line:
 * an estimate's value holds until the next estimate. The y axis is logarithmic (prices span decades).
 */

/** One point: an estimate's slot and its levels, in micro-lamports per compute unit. */
export interface FeePoint {
  readonly slot: bigint;
  readonly levels: Readonly<Record<FeeLevelName, bigint>>;
}

/** The lines drawn, in legend order. */
export const FEE_LINES = ["low", "medium", "high", "veryHigh", "recommended"] as const;
export type FeeLevelName = (typeof FEE_LINES)[number];

const COLORS: Record<FeeLevelName, string> = {
  low: "#4c9f70",
  medium: "#3a7bd5",
  high: "#e8a33d",
  veryHigh: "#d64545",
  recommended: "#222222",
};

const SVG = "http://www.w3.org/2000/svg";
const WIDTH = 600;
const HEIGHT = 200;
const PAD = { left: 56, right: 8, top: 8, bottom: 20 };

/** Keeps the points of the last `slots` slots and draws them into an `<svg>`. */
export function createFeeChart(svg: SVGSVGElement, slots = 150) {
  svg.setAttribute("viewBox", `0 0 ${WIDTH} ${HEIGHT}`);
  svg.setAttribute("role", "img");
  const points: FeePoint[] = [];

  function y(value: bigint, top: number): number {
    const scaled = Math.log10(1 + Number(value)) / top;
    return PAD.top + (1 - scaled) * (HEIGHT - PAD.top - PAD.bottom);
  }

  function draw(): void {
    svg.replaceChildren();
    if (points.length === 0) return;
    const newest = points[points.length - 1].slot;
    // The axis starts at the first slot the page has (a page opened mid-run has no history to show),
    // and spans at most the window.
    const windowStart = newest - BigInt(slots);
    const oldest = points[0].slot > windowStart ? points[0].slot : windowStart;
    const span = Math.max(1, Number(newest - oldest));
    const x = (slot: bigint) => PAD.left + (Number(slot - oldest) / span) * (WIDTH - PAD.left - PAD.right);
    let max = 1n;
    for (const p of points) for (const name of FEE_LINES) if (p.levels[name] > max) max = p.levels[name];
    const top = Math.log10(1 + Number(max));
    const text = (content: string, tx: number, ty: number, anchor = "end") => {
      const t = document.createElementNS(SVG, "text");
      Object.entries({ x: tx, y: ty, "text-anchor": anchor, "font-size": 10 }).forEach(([k, v]) =>
        t.setAttribute(k, String(v)),
      );
      t.textContent = content;
      svg.append(t);
    };
    text(max.toLocaleString(), PAD.left - 4, PAD.top + 8);
    text("0", PAD.left - 4, HEIGHT - PAD.bottom);
    text(`slot ${oldest}`, PAD.left, HEIGHT - 4, "start");
    text(`slot ${newest}`, WIDTH - PAD.right, HEIGHT - 4);
    for (const name of FEE_LINES) {
      const coords: string[] = [];
      points.forEach((p, i) => {
        const py = y(p.levels[name], top);
        // A step: the value holds from this estimate's slot to the next one's (or the newest slot).
        const until = i + 1 < points.length ? points[i + 1].slot : newest;
        coords.push(`${x(p.slot < oldest ? oldest : p.slot).toFixed(1)},${py.toFixed(1)}`);
        coords.push(`${x(until).toFixed(1)},${py.toFixed(1)}`);
      });
      const line = document.createElementNS(SVG, "polyline");
      line.setAttribute("points", coords.join(" "));
      line.setAttribute("fill", "none");
      line.setAttribute("stroke", COLORS[name]);
      line.setAttribute("stroke-width", name === "recommended" ? "2" : "1.5");
      if (name === "recommended") line.setAttribute("stroke-dasharray", "4 2");
      line.dataset.level = name;
      svg.append(line);
    }
  }

  return {
    /** Adds an estimate and redraws; points older than the window go (the last one before it stays, as a step). */
    add(point: FeePoint): void {
      points.push(point);
      const oldest = point.slot - BigInt(slots);
      while (points.length > 1 && points[1].slot <= oldest) points.shift();
      draw();
    },
    /** The color of each line, for the legend. */
    colorOf: (name: FeeLevelName) => COLORS[name],
    size: () => points.length,
  };
}
