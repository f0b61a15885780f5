/**
 * A program that really spends compute units: it counts a register down from a fixed number, one `sub` and one
 * `jne` per turn (the SBF interpreter meters one unit per instruction), then returns success. For benches whose
 * sends must cost a block what a real program call does (a ~200,000-CU request), with a limit that a simulation
 * measures honestly rather than one a client merely asks for: a transfer alone simulates at a few hundred units,
 * and a limit measured from it fits any block's leftover room. Deploy it with `LOCALNET_PROGRAMS` (write the ELF to a
 * file) and call it with no accounts and no data.
 */
import { sbfProgramElf } from "./stand-in-program.ts";

/** Units one turn of the loop costs: `sub64` and `jne`. */
const UNITS_PER_TURN = 2;
/** Units outside the loop: `mov64 r1, n`, `mov64 r0, 0`, `exit`. */
const FIXED_UNITS = 3;

const instruction = (opcode: number, registers: number, offset: number, immediate: number) => {
  const out = Buffer.alloc(8);
  out.writeUInt8(opcode, 0);
  out.writeUInt8(registers, 1);
  out.writeInt16LE(offset, 2);
  out.writeInt32LE(immediate, 4);
  return out;
};

/** The compute units one call spends inside the program for `turns` turns of the loop (the loader's own cost aside). */
export function computeBurnerUnits(turns: number): number {
  return FIXED_UNITS + UNITS_PER_TURN * turns;
}

/** The program's ELF: `turns` turns of the loop (1 to 2^31 - 1) for each call. */
export function computeBurnerElf(turns: number): Uint8Array {
  if (!Number.isInteger(turns) || turns < 1 || turns > 0x7fffffff)
    throw new Error("the burner's turns must be a whole number from 1 to 2^31 - 1");
  return sbfProgramElf(
    Buffer.concat([
      instruction(0xb7, 0x01, 0, turns), // mov64 r1, turns
      instruction(0x17, 0x01, 0, 1), // sub64 r1, 1
      instruction(0x55, 0x01, -2, 0), // jne r1, 0, back to the sub
      instruction(0xb7, 0x00, 0, 0), // mov64 r0, 0
      instruction(0x95, 0x00, 0, 0), // exit
    ]),
  );
}
