/**
 * What every bundle store does, as two replicas see it (`a` and `b` are the same store for the memory one, two
 * connections to one Redis for the Redis one): a recorded bundle is read back whole, a record only moves forward
 * and a final one is never replaced, a resend starts anew unless the bundle is in a block, and a forgotten bundle
 * is gone.
 */
import { expect } from "vitest";
import type { BundleRecord, BundleState } from "../../src/transactions/bundle-record.ts";
import type { BundleStore, SentBundle } from "../../src/transactions/bundle-store.ts";

let ids = 0;

function sentBundle(): SentBundle {
  const n = String(++ids).padStart(4, "0");
  return {
    bundleId: `${n}${"ab".repeat(30)}`,
    signatures: [`sigA${n}`, `sigB${n}`],
    blockhashes: ["EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N"],
    lastValidBlockHeight: 18_446_744_073_709_551_000n,
    sentAt: 1_700_000_000_000,
    accepted: false,
  };
}

function record(bundle: SentBundle, state: BundleState, extra: Partial<BundleRecord> = {}): BundleRecord {
  return {
    bundleId: bundle.bundleId,
    state,
    signatures: bundle.signatures,
    transactions: [],
    updatedAt: new Date(1_700_000_000_500),
    ...extra,
  };
}

/** Runs the contract on two replicas' views of one store. */
export async function checkBundleStore(a: BundleStore, b: BundleStore): Promise<void> {
  const bundle = sentBundle();
  expect(await b.get(bundle.bundleId)).toBeUndefined();
  await a.insert(bundle);
  expect(await b.get(bundle.bundleId)).toEqual(bundle);
  await a.accept(bundle.bundleId);
  expect((await b.get(bundle.bundleId))?.accepted).toBe(true);

  // Forward only; what is in a block keeps its members' records, bigints and dates included.
  const landed = record(bundle, "landed", {
    engineStatus: "Landed",
    slot: 42n,
    lastValidBlockHeight: 1000n,
    transactions: [
      { signature: bundle.signatures[0] as string, state: "confirmed", slot: 42n, fee: 5000n, updatedAt: new Date(7) },
      {
        signature: bundle.signatures[1] as string,
        state: "failed",
        slot: 42n,
        error: {
          code: "InstructionError",
          message: "custom program error: 0x1",
          instructionIndex: 0,
          customCode: 1,
          raw: { InstructionError: [0, { Custom: 1 }] },
        },
        updatedAt: new Date(8),
      },
    ],
  });
  await b.advance(bundle.bundleId, landed);
  expect((await a.get(bundle.bundleId))?.record).toEqual(landed);
  await a.advance(bundle.bundleId, record(bundle, "pending"));
  expect((await b.get(bundle.bundleId))?.record?.state).toBe("landed");
  // A resend of a bundle in a block changes nothing.
  await b.insert({ ...bundle, sentAt: bundle.sentAt + 1 });
  expect(await a.get(bundle.bundleId)).toEqual({ ...bundle, accepted: true, record: landed });
  await a.advance(bundle.bundleId, record(bundle, "finalized", { slot: 42n }));
  await b.advance(bundle.bundleId, record(bundle, "failed", { reason: "late" }));
  expect((await a.get(bundle.bundleId))?.record?.state).toBe("finalized");

  // A bundle the engine lost: final `invalid`, and a resend starts it anew.
  const lost = sentBundle();
  await a.insert(lost);
  await a.accept(lost.bundleId);
  await b.advance(lost.bundleId, record(lost, "invalid", { engineStatus: "Invalid", reason: "dropped" }));
  expect((await a.get(lost.bundleId))?.record?.state).toBe("invalid");
  await b.insert({ ...lost, sentAt: lost.sentAt + 5 });
  expect(await a.get(lost.bundleId)).toEqual({ ...lost, sentAt: lost.sentAt + 5 });

  // Forgotten (refused by the engine): gone, and neither a late mark nor a late record brings it back.
  await a.delete(lost.bundleId);
  await b.accept(lost.bundleId);
  await b.advance(lost.bundleId, record(lost, "pending"));
  expect(await a.get(lost.bundleId)).toBeUndefined();
}
