/**
 * docs/clients.md's and the README's snippets are lines of the example files: each code block after a
 * `<!-- snippet: PATH -->` comment must have every line in PATH, in the same order (leading
 * whitespace aside), so the docs cannot drift from the programs CI runs.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "../..");
/** The `<!-- snippet: PATH -->` code blocks of a document. */
function snippetsOf(document: string) {
  const text = readFileSync(join(root, document), "utf8");
  return [...text.matchAll(/<!-- snippet: (\S+) -->\n```\w*\n([\s\S]*?)\n```/g)].map((m) => ({
    path: m[1],
    lines: m[2].split("\n").map((line) => line.trim()),
  }));
}
const snippets = snippetsOf("docs/clients.md");
const readmeSnippets = snippetsOf("README.md");

/** The snippet lines not found in `file` in order (each searched for after the previous one's match). */
function missingLines(lines: string[], file: string): string[] {
  const fileLines = file.split("\n").map((line) => line.trim());
  const missing: string[] = [];
  let from = 0;
  for (const line of lines.filter((l) => l !== "")) {
    const at = fileLines.indexOf(line, from);
    if (at < 0) missing.push(line);
    else from = at + 1;
  }
  return missing;
}

describe("docs/clients.md snippets", () => {
  it("has one for each example's client", () => {
    expect(snippets.map((s) => s.path).sort()).toEqual([
      "examples/go/main.go",
      "examples/rust/Cargo.toml",
      "examples/rust/src/main.rs",
      "examples/typescript/main.ts",
    ]);
  });

  it.each(snippets.map((s) => [s.path, s] as const))("%s: every line is in the file, in order", (path, snippet) => {
    expect(missingLines(snippet.lines, readFileSync(join(root, path), "utf8"))).toEqual([]);
  });

  it("README: one first call per language, every line in its example, in order", () => {
    expect(readmeSnippets.map((s) => s.path).sort()).toEqual([
      "examples/go/main.go",
      "examples/rust/src/main.rs",
      "examples/typescript/main.ts",
    ]);
    for (const snippet of readmeSnippets) {
      expect(missingLines(snippet.lines, readFileSync(join(root, snippet.path), "utf8")), snippet.path).toEqual([]);
    }
  });

  it("notices a line that is not in the file, or out of order", () => {
    expect(missingLines(["a", "c"], "a\nb\nc")).toEqual([]);
    expect(missingLines(["a", "x"], "a\nb\nc")).toEqual(["x"]);
    expect(missingLines(["c", "a"], "a\nb\nc")).toEqual(["a"]);
  });
});
