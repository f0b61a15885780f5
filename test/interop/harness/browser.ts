/**
 * Headless Chromium (Debian's, at /usr/bin/chromium) driven by playwright-core: loads the demo page
 * in its scripted mode and returns the report the page publishes as `window.solgateReport`.
 */
import { existsSync } from "node:fs";
import { chromium } from "playwright-core";
import type { Browser } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";

/** The flags this machine needs: no sandbox as root, and no calls home (the network is closed). */
const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** A launched browser (playwright gives it a new empty profile of its own). */
export interface HeadlessBrowser {
  browser: Browser;
  close(): Promise<void>;
}

/** Launches Chromium; throws a clear message when it is not installed. */
export async function launchChromium(): Promise<HeadlessBrowser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: run test/interop/install-deps.sh (apt-get install chromium)`);
  }
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS, timeout: 60_000 });
  return {
    browser,
    async close() {
      await browser.close().catch(() => {});
    },
  };
}

/** What the page saw, plus the console lines and page errors along the way. */
export interface PageRun {
  report: Record<string, any>;
  console: string[];
}

/** Opens `url` (the page with `auto=1`), waits for the report, returns it. */
export async function runPage(headless: HeadlessBrowser, url: string, timeoutMs = 120_000): Promise<PageRun> {
  const page = await headless.browser.newPage();
  const console: string[] = [];
  page.on("console", (m) => console.push(`${m.type()}: ${m.text()}`));
  page.on("pageerror", (e) => console.push(`pageerror: ${e.message}`));
  try {
    await page.goto(url);
    await page.waitForSelector("body[data-state=done]", { timeout: timeoutMs });
    const report = (await page.evaluate("window.solgateReport")) as Record<string, any>;
    return { report, console };
  } catch (e) {
    throw new Error(`${(e as Error).message}\nconsole:\n${console.join("\n")}`);
  } finally {
    await page.close();
  }
}
