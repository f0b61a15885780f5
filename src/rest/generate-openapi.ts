/**
 * Writes gen/openapi/solgate.openapi.json: installs the pinned protoc-gen-connect-openapi (idempotent),
 * runs buf.gen.openapi.yaml into a temporary directory, and post-processes the plugin's document into
 * the REST form (openapi-document.ts). With `--check`, writes nothing and exits 1 if the committed
 * document is stale (CI runs this).
 *
 *   node src/rest/generate-openapi.ts [--check]
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { buildOpenApiDocument } from "./openapi-document.ts";
import { OPENAPI_PATH } from "./rest-handler.ts";
import { SOLGATE_SERVICES } from "../server/routes.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));

/** Runs the plugin and returns the REST document as committed text. */
export function generateOpenApiText(): string {
  const pluginDir = execFileSync("bash", [path.join(root, "test/rest/install-openapi-plugin.sh")], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  }).trim();
  const out = mkdtempSync(path.join(tmpdir(), "solgate-openapi-"));
  try {
    execFileSync(
      path.join(root, "node_modules/.bin/buf"),
      ["generate", "--template", "buf.gen.openapi.yaml", "-o", out],
      {
        cwd: root,
        stdio: ["ignore", "inherit", "inherit"],
        env: { ...process.env, PATH: `${pluginDir}${path.delimiter}${process.env.PATH ?? ""}` },
      },
    );
    const raw = JSON.parse(readFileSync(path.join(out, "gen/openapi/solgate.openapi.raw.json"), "utf8")) as Record<
      string,
      unknown
    >;
    const doc = buildOpenApiDocument(raw, SOLGATE_SERVICES);
    return `${JSON.stringify(doc, null, 2)}\n`;
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const text = generateOpenApiText();
  const target = fileURLToPath(OPENAPI_PATH);
  if (process.argv.includes("--check")) {
    let committed = "";
    try {
      committed = readFileSync(target, "utf8");
    } catch {}
    if (committed !== text) {
      process.stderr.write(
        `${path.relative(root, target)} is stale: run \`node src/rest/generate-openapi.ts\` and commit it\n`,
      );
      process.exit(1);
    }
    process.stdout.write(`${path.relative(root, target)} is fresh\n`);
  } else {
    mkdirSync(path.dirname(target), { recursive: true });
    writeFileSync(target, text);
    process.stdout.write(`wrote ${path.relative(root, target)}\n`);
  }
}
