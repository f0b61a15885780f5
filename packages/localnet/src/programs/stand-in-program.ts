/**
 * The SBF program deployed at the addresses of the programs the localnet emulates (Token Metadata,
 * Bubblegum, Account Compression, SPL Noop): two instructions, `mov64 r0, 0; exit`, so it succeeds on
 * any accounts and data. LiteSVM runs a transaction that calls one of them as any other (signatures,
 * fees, the other instructions, logs `invoke [1]` ... `success`); what the real program would have done
 * is then done by its emulation (emulated-programs.ts). For SPL Noop this is the real behaviour.
 *
 * No SBF toolchain can be had here, so the ELF is written byte by byte: a 64-bit little-endian ET_DYN
 * object for e_machine BPF (247), one PT_LOAD segment and a `.text` section holding the two
 * instructions, e_flags 0 (SBPF v0, which solana-sbpf's lenient loader reads without a symbol table).
 */
const EM_BPF = 247;
const ELF_HEADER_SIZE = 64;
const PROGRAM_HEADER_SIZE = 56;
const SECTION_HEADER_SIZE = 64;
/** `mov64 r0, 0` (opcode 0xb7) then `exit` (0x95): return SUCCESS. */
const TEXT = Uint8Array.of(0xb7, 0, 0, 0, 0, 0, 0, 0, 0x95, 0, 0, 0, 0, 0, 0, 0);
const SECTION_NAMES = Buffer.from("\0.text\0.shstrtab\0", "latin1");

/** The ELF bytes (the same on every call). */
export function standInProgramElf(): Uint8Array {
  return sbfProgramElf(TEXT);
}

/**
 * An SBPF v0 program ELF around `code` (whole 8-byte instructions), laid out as the stand-in's: the loader reads it
 * without a symbol table, the entry point at the first instruction.
 */
export function sbfProgramElf(code: Uint8Array): Uint8Array {
  if (code.length === 0 || code.length % 8 !== 0) throw new Error("an SBF program's text is whole 8-byte instructions");
  const textOffset = ELF_HEADER_SIZE + PROGRAM_HEADER_SIZE;
  const namesOffset = textOffset + code.length;
  const sectionsOffset = (namesOffset + SECTION_NAMES.length + 7) & ~7;
  const out = Buffer.alloc(sectionsOffset + 3 * SECTION_HEADER_SIZE);
  // ELF header: magic, ELFCLASS64, ELFDATA2LSB, EV_CURRENT, ELFOSABI_NONE.
  out.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0], 0);
  out.writeUInt16LE(3, 16); // ET_DYN
  out.writeUInt16LE(EM_BPF, 18);
  out.writeUInt32LE(1, 20);
  out.writeBigUInt64LE(BigInt(textOffset), 24); // e_entry
  out.writeBigUInt64LE(BigInt(ELF_HEADER_SIZE), 32); // e_phoff
  out.writeBigUInt64LE(BigInt(sectionsOffset), 40); // e_shoff
  out.writeUInt16LE(ELF_HEADER_SIZE, 52);
  out.writeUInt16LE(PROGRAM_HEADER_SIZE, 54);
  out.writeUInt16LE(1, 56); // e_phnum
  out.writeUInt16LE(SECTION_HEADER_SIZE, 58);
  out.writeUInt16LE(3, 60); // e_shnum: null, .text, .shstrtab
  out.writeUInt16LE(2, 62); // e_shstrndx
  // PT_LOAD, R+X, the text at its file offset.
  const ph = ELF_HEADER_SIZE;
  out.writeUInt32LE(1, ph);
  out.writeUInt32LE(5, ph + 4);
  for (const at of [8, 16, 24]) out.writeBigUInt64LE(BigInt(textOffset), ph + at);
  out.writeBigUInt64LE(BigInt(code.length), ph + 32);
  out.writeBigUInt64LE(BigInt(code.length), ph + 40);
  out.writeBigUInt64LE(0x1000n, ph + 48);
  out.set(code, textOffset);
  out.set(SECTION_NAMES, namesOffset);
  // .text: SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR.
  const text = sectionsOffset + SECTION_HEADER_SIZE;
  out.writeUInt32LE(1, text);
  out.writeUInt32LE(1, text + 4);
  out.writeBigUInt64LE(6n, text + 8);
  out.writeBigUInt64LE(BigInt(textOffset), text + 16);
  out.writeBigUInt64LE(BigInt(textOffset), text + 24);
  out.writeBigUInt64LE(BigInt(code.length), text + 32);
  out.writeBigUInt64LE(8n, text + 48);
  // .shstrtab: SHT_STRTAB.
  const names = text + SECTION_HEADER_SIZE;
  out.writeUInt32LE(7, names);
  out.writeUInt32LE(3, names + 4);
  out.writeBigUInt64LE(BigInt(namesOffset), names + 24);
  out.writeBigUInt64LE(BigInt(SECTION_NAMES.length), names + 32);
  out.writeBigUInt64LE(1n, names + 48);
  return new Uint8Array(out);
}
