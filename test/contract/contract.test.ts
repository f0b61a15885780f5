/**
 * The contract as its users take it: `buf` at the repository root with no node_modules beside the
 * protos, and `buf breaking` against the released image (releases/contract-v1.0.0.binpb), which
 * CI runs too. Each test works on a copy of proto/, third_party/ and buf.yaml in a temp directory.
 */
import { execFile } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const BUF = join(ROOT, "node_modules/.bin/buf");
const RELEASE = join(ROOT, "releases/contract-v1.0.0.binpb");
const run = promisify(execFile);

const copies: string[] = [];
afterEach(() => {
  for (const dir of copies.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A copy of the contract's workspace (no node_modules), with `edit` applied to one file. */
function workspace(edit?: { file: string; from: string | RegExp; to: string }): string {
  const dir = mkdtempSync(join(tmpdir(), "solgate-contract-"));
  copies.push(dir);
  for (const part of ["proto", "third_party", "buf.yaml", "buf.gen.yaml"])
    cpSync(join(ROOT, part), join(dir, part), { recursive: true });
  if (edit !== undefined) {
    const path = join(dir, "proto/solgate/v1", edit.file);
    const before = readFileSync(path, "utf8");
    const after = before.replace(edit.from, edit.to);
    expect(after, "the edit must change the file").not.toBe(before);
    writeFileSync(path, after);
  }
  return dir;
}

async function buf(cwd: string, ...args: string[]): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run(BUF, args, { cwd });
    return { code: 0, out: stdout + stderr };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof err.code === "number" ? err.code : -1, out: `${err.stdout ?? ""}${err.stderr ?? ""}` };
  }
}

const breaking = (dir: string) => buf(dir, "breaking", "proto", "--against", RELEASE);

describe("the contract builds on its own", () => {
  it("buf build and buf lint pass at the root of a copy with no node_modules", async () => {
    const dir = workspace();
    expect(await buf(dir, "build")).toEqual({ code: 0, out: "" });
    expect(await buf(dir, "lint")).toEqual({ code: 0, out: "" });
  });

  it("is unchanged since v1.0.0: buf breaking against the released image passes", async () => {
    expect(await breaking(workspace())).toEqual({ code: 0, out: "" });
  });
});

describe("buf breaking refuses an incompatible change to solgate.v1", () => {
  it("a renamed field (its JSON name changes)", async () => {
    const result = await breaking(
      workspace({ file: "collection.proto", from: /string address = 1;/, to: "string mint_address = 1;" }),
    );
    expect(result.code).not.toBe(0);
    expect(result.out).toMatch(
      /Field "1" with name "mint_address" on message "\w+" changed option "json_name" from "address" to "mintAddress"|changed name from "address" to "mint_address"/,
    );
  });

  it("a field whose number changes (its wire tag)", async () => {
    const result = await breaking(
      workspace({ file: "collection.proto", from: /string address = 1;/, to: "string address = 99;" }),
    );
    expect(result.code).not.toBe(0);
    expect(result.out).toMatch(/Previously present field "1" with name "address" on message "\w+" was deleted/);
  });

  it("a field whose type changes", async () => {
    const result = await breaking(
      workspace({ file: "collection.proto", from: /uint64 lamports = 1;/, to: "string lamports = 1;" }),
    );
    expect(result.code).not.toBe(0);
    expect(result.out).toMatch(
      /Field "1" with name "lamports" on message "\w+" changed type from "uint64" to "string"/,
    );
  });

  it("a removed RPC", async () => {
    const result = await breaking(
      workspace({
        file: "fee_service.proto",
        from: /\n\s*rpc GetFees\([^)]*\) returns \([^)]*\) \{[\s\S]*?\n {2}\}\n/,
        to: "\n",
      }),
    );
    expect(result.code).not.toBe(0);
    expect(result.out).toMatch(/Previously present RPC "GetFees" on service "FeeService" was deleted/);
  });
});
