/**
 * Real SBF programs for the loading tests, taken from the LiteSVM addon this package already
 * depends on: it embeds the SPL programs it preloads (Token, Token-2022, ATA, Memo...) as ELF
 * images. This finds the BPF/SBF ELF objects in the addon's bytes and cuts each at the end of its
 * section header table (where an SBF linker puts it).
 */
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(import.meta.url);

function addonBytes(): Buffer {
  const dir = path.dirname(path.dirname(require.resolve("litesvm/package.json")));
  for (const name of readdirSync(dir)) {
    if (!name.startsWith("litesvm-")) continue;
    const node = readdirSync(path.join(dir, name)).find((f) => f.endsWith(".node"));
    if (node !== undefined) return readFileSync(path.join(dir, name, node));
  }
  throw new Error("no LiteSVM native addon found beside the litesvm package");
}

/** The SBF/BPF ELF images embedded in the LiteSVM addon. */
export function embeddedPrograms(): Buffer[] {
  const bytes = addonBytes();
  const magic = Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1]);
  const found: Buffer[] = [];
  for (let at = bytes.indexOf(magic, 1); at >= 0; at = bytes.indexOf(magic, at + 1)) {
    const machine = bytes.readUInt16LE(at + 18);
    if (machine !== 247 && machine !== 263) continue;
    const sectionHeaders = Number(bytes.readBigUInt64LE(at + 0x28));
    const size = sectionHeaders + bytes.readUInt16LE(at + 0x3a) * bytes.readUInt16LE(at + 0x3c);
    found.push(bytes.subarray(at, at + size));
  }
  return found;
}

/** SPL Token (v3), recognised by its instruction log strings and its size. */
export function splTokenElf(): Buffer {
  const token = embeddedPrograms().find(
    (elf) =>
      elf.includes("Instruction: InitializeMint2") &&
      !elf.includes("Token-2022") &&
      !elf.includes("ConfidentialTransfer"),
  );
  if (token === undefined) throw new Error("SPL Token ELF not found in the LiteSVM addon");
  return token;
}
