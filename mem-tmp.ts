import v8 from "node:v8"; import vm from "node:vm"; import bs58 from "bs58"; import { randomBytes } from "node:crypto";
import { getBase58Decoder } from "@solana/kit";
v8.setFlagsFromString("--expose-gc"); const gc = vm.runInNewContext("gc");
const raw = Array.from({ length: 100_000 }, () => new Uint8Array(randomBytes(32)));
const measure = (name: string, make: (r: Uint8Array) => string) => {
  gc(); const b = process.memoryUsage().heapUsed;
  const out = raw.map(make); new Set(out);
  gc(); console.log(name, ((process.memoryUsage().heapUsed - b) / out.length).toFixed(0), "B/string");
  return out;
};
const keep: unknown[] = [];
keep.push(measure("bs58", (r) => bs58.encode(r)));
const k = getBase58Decoder();
keep.push(measure("kit", (r) => k.decode(r)));
keep.push(measure("bs58+flat", (r) => { const s = bs58.encode(r); return Buffer.from(s, "latin1").toString("latin1"); }));
keep.push(measure("latin1", (r) => Buffer.from(r).toString("latin1")));
console.log(keep.length);
