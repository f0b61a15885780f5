/**
 * Browser: the demo page (src/demo/page, bundled by esbuild with connect-web) in Debian's headless
 * Chromium, served from a second local origin so every call is cross-origin (CORS preflights with
 * the Authorization header). Over gRPC-Web and over Connect it calls GetFees, WatchFees and
 * ListProgramAccounts, probes two errors, and follows a WatchStatus stream to its end; the test asserts
 * on its report. The same page in its live mode (what `/demo` shows a person) must show fee levels (table
 * and chart, from WatchFees) and the status timeline, a fee ladder climbing on the landing curve (WatchLadder,
 * EstimateFees' curve), and a collection's change feed with its verified size over time (WatchCollection).
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { TransactionService } from "../../gen/solgate/v1/transaction_service_pb.js";
import { launchChromium, runPage } from "./harness/browser.ts";
import type { HeadlessBrowser } from "./harness/browser.ts";
import { buildDraft, createNonceAccount, sendTransfer, signWithPayer } from "./harness/chain-fixture.ts";
import { TOKEN_PROGRAM } from "./harness/client-env.ts";
import { landed } from "./harness/landed.ts";
import { startPageServer } from "./harness/page-server.ts";
import type { PageServer } from "./harness/page-server.ts";

const ORDER = ["SUBMITTED", "CONFIRMED", "FINALIZED"];

describe("browser (connect-web in headless Chromium, cross-origin)", () => {
  const ctx = inject("interop");
  let pages: PageServer;
  let chromium: HeadlessBrowser;
  let signature: string;
  beforeAll(async () => {
    [pages, chromium] = await Promise.all([startPageServer(), launchChromium()]);
    // A transaction sent to the chain directly: the gateway must find and follow it all the same.
    signature = await sendTransfer(ctx.localnetUrl, ctx.chain.payerSeed, 3);
  });
  afterAll(async () => {
    await chromium?.close();
    await pages?.close();
  });

  const pageUrl = (protocol: string, extra: Record<string, string> = {}) => {
    const q = new URLSearchParams({
      server: ctx.url,
      key: ctx.apiKey,
      protocol,
      program: TOKEN_PROGRAM,
      size: "165",
      signature,
      ...extra,
    });
    q.append("match", `0:${ctx.chain.mint}`);
    return `${pages.url}?${q}`;
  };

  it("calls GetFees, ListProgramAccounts and follows WatchStatus over gRPC-Web and Connect", async () => {
    // Both at once: two streams on the same transaction, while it moves. Soft assertions: one run
    // reports every section that is wrong, not just the first.
    const runs = await Promise.all(["grpcweb", "connect"].map((p) => runPage(chromium, pageUrl(p, { auto: "1" }))));
    for (const { report, console: lines } of runs) {
      const what = `${report.protocol}: ${JSON.stringify(report, null, 1)}\nconsole:\n${lines.join("\n")}`;
      expect.soft(report.origin, what).not.toBe(new URL(ctx.url).origin);

      if (landed("FeeService")) {
        expect.soft(report.fees.ok, what).toBe(true);
        const fees = report.fees.value;
        expect.soft(fees.lamportsPerSignature).toBe("5000");
        expect.soft(fees.lamportsPerSignatureType).toBe("bigint");
        expect.soft(["BLOCKS", "RECENT_PRIORITIZATION_FEES", "NONE"]).toContain(fees.source);
        expect.soft(Math.abs(Date.parse(fees.updatedAt) - Date.now())).toBeLessThan(3_600_000);
        // WatchFees: the current estimate at once, the same kind of estimate GetFees answers; any later one is newer.
        expect.soft(report.feeWatch.ok, what).toBe(true);
        const watched = report.feeWatch.value ?? [];
        expect.soft(watched.length, what).toBeGreaterThanOrEqual(1);
        expect.soft(watched[0]?.lamportsPerSignature, what).toBe("5000");
        expect.soft(["BLOCKS", "RECENT_PRIORITIZATION_FEES", "NONE"]).toContain(watched[0]?.source);
        if (watched.length === 2) expect.soft(BigInt(watched[1].slot) > BigInt(watched[0].slot), what).toBe(true);
      } else {
        expect.soft(report.fees.error?.code, what).toBe("unimplemented"); // TODO(interop): FeeService not landed
      }

      expect.soft(report.programs.ok, what).toBe(true);
      const listed = report.programs.value;
      expect.soft(listed.nextCursor).toBeNull();
      expect
        .soft(listed.items.map((a: { address: string }) => a.address))
        .toEqual(ctx.chain.tokenAccounts.map((a) => a.address));
      expect.soft(listed.items.map((a: { raw: string }) => a.raw)).toEqual(ctx.chain.tokenAccounts.map((a) => a.raw));
      expect
        .soft(
          listed.items.every(
            (a: { format: string; lamportsType: string }) => a.format === "PARSED" && a.lamportsType === "bigint",
          ),
        )
        .toBe(true);

      // AccountService and TokenService: the first listed account looked up alone, and the mint's holders.
      expect
        .soft(report.account.value, what)
        .toMatchObject({ address: listed.items[0].address, owner: listed.programId, mint: ctx.chain.mint });
      expect
        .soft(report.holders.value?.tokenAccounts.sort(), what)
        .toEqual(ctx.chain.tokenAccounts.map((a) => a.address).sort());
      expect
        .soft(report.badAddress.error, what)
        .toMatchObject({ code: "invalid_argument", reason: "INVALID_ADDRESS", domain: "solgate" });
      expect
        .soft(report.noKey.error, what)
        .toMatchObject({ code: "unauthenticated", reason: "UNAUTHENTICATED", domain: "solgate" });

      if (landed("TransactionService")) {
        expect.soft(report.watch.ok, what).toBe(true);
        const statuses = report.watch.events
          .filter((e: { kind: string }) => e.kind === "record")
          .map((e: { status: string }) => e.status);
        expect.soft(statuses.length, what).toBeGreaterThan(0);
        expect.soft(statuses.at(-1), what).toBe("FINALIZED");
        const ranks = statuses.map((s: string) => ORDER.indexOf(s));
        expect
          .soft(
            ranks.every((r: number, i: number) => r >= 0 && (i === 0 || r >= ranks[i - 1])),
            what,
          )
          .toBe(true);
      } else {
        expect.soft(report.watch.error?.code, what).toBe("unimplemented"); // TODO(interop): TransactionService not landed
      }
    }
  });

  it("shows a person the fee levels and the transaction's status in its live mode", async () => {
    const page = await chromium.browser.newPage();
    try {
      await page.goto(pageUrl("connect"));
      // The fee table fills within one refresh; the watch of a finalized transaction ends at once.
      await page.waitForFunction(() => document.querySelectorAll("#fees tr").length >= 2, undefined, {
        timeout: 30_000,
      });
      await page.waitForFunction(
        () => document.querySelector("#statuses")?.textContent?.includes("stream ended"),
        undefined,
        { timeout: 60_000 },
      );
      const fees = await page.locator("#fees").innerText();
      const statuses = await page.locator("#statuses").innerText();
      if (landed("FeeService")) {
        expect(fees).toContain("5000 lamports/signature");
        // The chart draws the four levels and recommended from the WatchFees stream once it has levels.
        if (!fees.includes("NONE")) {
          await page.waitForFunction(() => document.querySelectorAll("#fee-chart polyline").length === 5, undefined, {
            timeout: 30_000,
          });
          const lines = await page
            .locator("#fee-chart polyline")
            .evaluateAll((els) =>
              els.map((el) => [(el as SVGElement).dataset.level, el.getAttribute("points")?.split(" ").length ?? 0]),
            );
          expect(lines.map(([level]) => level)).toEqual(["low", "medium", "high", "veryHigh", "recommended"]);
          for (const [, points] of lines) expect(points).toBeGreaterThanOrEqual(2);
          // The x axis starts at the first slot the page has, not at slot 0 or a full window back: the
          // leftmost point sits on the axis (PAD.left, 56) even though the page is younger than the window.
          const leftmost = await page
            .locator("#fee-chart polyline")
            .evaluateAll((els) =>
              Math.min(
                ...els.flatMap((el) =>
                  (el.getAttribute("points") ?? "").split(" ").map((p) => Number(p.split(",")[0])),
                ),
              ),
            );
          expect(leftmost).toBe(56);
        }
      }
      if (landed("TransactionService")) expect(statuses).toContain("FINALIZED");
      expect(statuses).not.toContain("error:");
      if (process.env.INTEROP_SCREENSHOT)
        await page.screenshot({ path: process.env.INTEROP_SCREENSHOT, fullPage: true });
    } finally {
      await page.close();
    }
  });

  it("shows a fee ladder climbing on the landing curve, and a collection's feed with its verified size", async () => {
    // A ladder sent through the gateway as a client sends one: PrepareLadder on a new nonce account, every rung
    // signed, SendLadder. The page is given its id.
    const transactions = createClient(TransactionService, createGrpcTransport({ baseUrl: ctx.url }));
    const headers = { authorization: `Bearer ${ctx.apiKey}` };
    const nonceAccount = await createNonceAccount(ctx.localnetUrl, ctx.chain.payerSeed);
    const transaction = await buildDraft(ctx.localnetUrl, ctx.chain.payerSeed, 7);
    const plan = await transactions.prepareLadder({ transaction, nonceAccount, rungs: 3 }, { headers });
    const signed = await Promise.all(plan.rungs.map((r) => signWithPayer(r.transaction, ctx.chain.payerSeed)));
    const { ladder } = await transactions.sendLadder({ transactions: signed }, { headers });

    const page = await chromium.browser.newPage();
    const lines: string[] = [];
    page.on("pageerror", (e) => lines.push(`pageerror: ${e.message}`));
    try {
      await page.goto(pageUrl("grpcweb", { ladder: ladder!.id, collection: ctx.collection.address }));
      // The ladder as WatchLadder reports it, to its end: every rung with its price and state, one landed.
      await page.waitForSelector("#ladder-status[data-status=FINALIZED]", { timeout: 60_000 });
      const rungs = await page
        .locator("#ladder-rungs tr[data-state]")
        .evaluateAll((rows) => rows.map((r) => Array.from(r.querySelectorAll("td"), (td) => td.textContent ?? "")));
      expect(rungs.map((r) => BigInt(r[1].replace(/\D/g, "")))).toEqual(plan.rungs.map((r) => r.price));
      expect(rungs.filter((r) => r[4] === "LANDED")).toHaveLength(1);
      expect(rungs.find((r) => r[4] === "LANDED")?.[3]).toMatch(/^\d+$/);
      expect(await page.locator("#ladder-status").innerText()).toMatch(/^FINALIZED: rung \d landed in slot \d+/);
      // The landing curve from EstimateFees, with the three rungs drawn on it in their states' colors.
      await page.waitForFunction(
        () => Number(document.querySelector("#ladder-curve")?.getAttribute("data-points")) >= 8,
        undefined,
        {
          timeout: 30_000,
        },
      );
      expect(await page.locator("#ladder-curve polyline[data-line=curve]").count()).toBe(1);
      expect(await page.locator("#ladder-curve circle[data-state=LANDED]").count()).toBe(1);
      expect(await page.locator("#ladder-curve circle").count()).toBe(3);
      expect(rungs.every((r) => /^\d+%$/.test(r[2]))).toBe(true);

      // The feed: the collection read (its name and verified size), then its events as they come (FLOOR_CHANGED
      // from the market fixture at least), in sequence, newest first, and the size line drawn through them.
      await page.waitForFunction(() => document.querySelectorAll("#feed-events li[data-kind]").length >= 3, undefined, {
        timeout: 30_000,
      });
      const sequences = await page
        .locator("#feed-events li")
        .evaluateAll((items) => items.map((li) => Number((li as HTMLElement).dataset.sequence)));
      for (let i = 1; i < sequences.length; i++) expect(sequences[i - 1] - sequences[i]).toBe(1);
      // The size shown is the newest event's, read in one go (another event may come between two reads).
      const { kind, text, size, title } = await page.evaluate(() => {
        const newest = document.querySelector("#feed-events li") as HTMLElement;
        return {
          kind: newest.dataset.kind,
          text: newest.textContent ?? "",
          size: (document.querySelector("#feed-size") as HTMLElement).dataset.size,
          title: document.querySelector("#feed-title")?.textContent ?? "",
        };
      });
      expect(kind).toMatch(/^(FLOOR_CHANGED|MEMBER_ADDED|MEMBER_REMOVED|MEMBER_TRANSFERRED)$/);
      expect(text.endsWith(`verified size ${size}`), `${text} / ${size}`).toBe(true);
      expect(title).toBe(`${ctx.collection.name} (${ctx.collection.address})`);
      const points = await page.locator("#size-chart polyline").getAttribute("points");
      expect(points?.split(" ").length).toBeGreaterThanOrEqual(2 * (sequences.length + 1));
      expect(await page.locator("#feed-heartbeat").innerText()).not.toContain("error");
      if (process.env.INTEROP_SCREENSHOT)
        await page.screenshot({
          path: process.env.INTEROP_SCREENSHOT.replace(/(\.png)?$/, "-panels.png"),
          fullPage: true,
        });
    } catch (e) {
      throw new Error(`${(e as Error).message}\n${lines.join("\n")}`);
    } finally {
      await page.close();
    }
  });

  it("is served by the gateway itself at /demo/ (SOLGATE_DEMO=1), calling its own origin", async () => {
    const res = await fetch(`${ctx.url}/demo/`);
    // Wiring: src/main.ts passes `preHandlers: [createDemoHandler()]` (src/demo/demo-handler.ts) to
    // createServer when config.demo (SOLGATE_DEMO) is on; global-setup.ts turns it on.
    expect(
      res.status,
      "the gateway does not serve /demo/: wire createDemoHandler into src/main.ts behind SOLGATE_DEMO",
    ).toBe(200);
    const page = await chromium.browser.newPage();
    try {
      await page.goto(`${ctx.url}/demo/?${new URLSearchParams({ key: ctx.apiKey, protocol: "grpcweb", signature })}`);
      await page.waitForFunction(
        () => document.querySelector("#statuses")?.textContent?.includes("stream ended"),
        undefined,
        { timeout: 60_000 },
      );
      await page.waitForFunction(() => document.querySelectorAll("#fees tr").length >= 2, undefined, {
        timeout: 30_000,
      });
      expect(await page.locator("#statuses").innerText()).not.toContain("error:");
      expect(await page.locator("#server").innerText()).toContain(ctx.url);
    } finally {
      await page.close();
    }
  });
});
