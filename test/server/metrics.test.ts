/**
 * RPC counts (src/server/metrics.ts) are kept in plain numbers and added to prom-client's counters at
 * scrape time: what a scrape reads must be the running total, across scrapes, per label set.
 */
import { describe, expect, it } from "vitest";
import { createMetrics } from "../../src/server/metrics.ts";

function seriesValue(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("RPC metrics", () => {
  it("read the running totals by method, code and key at every scrape", async () => {
    const metrics = createMetrics();
    const ok = 'solgate_rpc_requests_total{service="s.S",method="M",code="ok"}';
    const bad = 'solgate_rpc_requests_total{service="s.S",method="M",code="invalid_argument"}';
    const byKey = 'solgate_rpc_requests_by_key_total{key="k1",code="ok"}';
    for (let i = 0; i < 3; i++) metrics.observeRpc("s.S", "M", "ok", 0.001, "k1");
    metrics.observeRpc("s.S", "M", "invalid_argument", 0.002);
    let text = await metrics.registry.metrics();
    expect(seriesValue(text, ok)).toBe(3);
    expect(seriesValue(text, bad)).toBe(1);
    expect(seriesValue(text, byKey)).toBe(3);
    expect(seriesValue(text, 'solgate_rpc_duration_seconds_count{service="s.S",method="M"}')).toBe(4);
    // A second scrape with nothing new reads the same; new calls add to the totals.
    expect(seriesValue(await metrics.registry.metrics(), ok)).toBe(3);
    metrics.observeRpc("s.S", "M", "ok", 0.001, "k1");
    metrics.observeRpc("s.S", "M", "ok", 0.001);
    text = await metrics.registry.metrics();
    expect(seriesValue(text, ok)).toBe(5);
    expect(seriesValue(text, byKey)).toBe(4);
    expect(seriesValue(text, bad)).toBe(1);
    const counter = await metrics.registry.getSingleMetric("solgate_rpc_requests_total")?.get();
    expect(counter?.values.find((v) => v.labels.code === "ok")?.value).toBe(5);
  });
});
