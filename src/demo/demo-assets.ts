/**
 * Builds the demo page's files: `index.html`, `demo.css` and `demo.js`, the last bundled by esbuild
 * from page/demo-page.ts (connect-web and the generated code inlined). esbuild is a dev dependency,
 * so it is imported only when the page is first asked for; a deployment without it answers 503 on
 * `/demo` and nothing else changes.
 */
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";

/** One file of the page. */
export interface DemoAsset {
  contentType: string;
  body: Buffer;
}

/** The page's files by name (`index.html`, `demo.css`, `demo.js`). */
export type DemoAssets = ReadonlyMap<string, DemoAsset>;

const PAGE_DIR = fileURLToPath(new URL("./page/", import.meta.url));

/** Bundles the page. Takes a few hundred milliseconds; callers cache the result. */
export async function buildDemoAssets(): Promise<DemoAssets> {
  const esbuild = await import("esbuild");
  const bundle = await esbuild.build({
    entryPoints: [`${PAGE_DIR}demo-page.ts`],
    bundle: true,
    write: false,
    format: "esm",
    platform: "browser",
    target: "es2022",
    minify: true,
    legalComments: "none",
    logLevel: "silent",
  });
  const js = bundle.outputFiles[0];
  if (js === undefined) throw new Error("esbuild produced no output for the demo page");
  return new Map([
    ["index.html", { contentType: "text/html; charset=utf-8", body: await readFile(`${PAGE_DIR}index.html`) }],
    ["demo.css", { contentType: "text/css; charset=utf-8", body: await readFile(`${PAGE_DIR}demo.css`) }],
    ["demo.js", { contentType: "text/javascript; charset=utf-8", body: Buffer.from(js.contents) }],
  ]);
}
