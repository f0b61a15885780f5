import { describe, expect, it } from "vitest";
import { stepTrackedSend } from "../../src/transactions/tracked-send.ts";
import type { StepContext } from "../../src/transactions/tracked-send.ts";
import type { TrackedSend } from "../../src/transactions/transaction-store.ts";

const send: TrackedSend = {
  signature: "sig",
  state: "submitted",
  updatedAt: new Date(0),
  wire: new Uint8Array([1, 2, 3]),
  blockhash: "hash",
  lastValidBlockHeight: 100n,
  expiryExact: true,
  commitment: "confirmed",
  expectedFee: 5_000n,
  landed: false,
  lastBroadcastAt: 1_000,
  broadcasts: 1,
};
const ctx: StepContext = { heightBefore: 90n, blockhashLapsed: false, now: 1_500, rebroadcastIntervalMs: 2_000 };

describe("stepTrackedSend", () => {
  it("never expires a send the same read sees in a block, even past its last valid height", () => {
    const step = stepTrackedSend(
      send,
      { slot: 7n, err: null, confirmationStatus: "confirmed" },
      { ...ctx, heightBefore: 101n },
    );
    expect(step.kind).toBe("transition");
    expect(step.kind === "transition" && step.next).toMatchObject({ state: "confirmed", slot: 7n, landed: true });
  });

  it("expires an unseen send once a height read before the status is past its last valid height", () => {
    expect(stepTrackedSend(send, null, { ...ctx, heightBefore: 100n }).kind).toBe("none");
    const step = stepTrackedSend(send, null, { ...ctx, heightBefore: 101n });
    expect(step.kind === "transition" && step.next).toMatchObject({
      state: "expired",
      landed: false,
      wire: new Uint8Array(),
    });
    // The node calling the blockhash dead is not enough while the chain stands at or below the height the
    // client was told: the send is only no longer sent. Without a told height, the node's word decides.
    const lapsed = stepTrackedSend(send, null, { ...ctx, now: 3_000, blockhashLapsed: true });
    expect(lapsed.kind === "update" && lapsed.next).toMatchObject({ state: "submitted", lastBroadcastAt: 3_000 });
    const { lastValidBlockHeight: _, ...untold } = send;
    expect(stepTrackedSend(untold, null, { ...ctx, blockhashLapsed: true }).kind).toBe("transition");
  });

  it("rebroadcasts an unseen send once per interval, and not a processed one", () => {
    expect(stepTrackedSend(send, null, ctx).kind).toBe("none");
    const due = stepTrackedSend(send, null, { ...ctx, now: 3_000 });
    expect(due.kind === "rebroadcast" && due.next).toMatchObject({ lastBroadcastAt: 3_000, broadcasts: 2 });
    const processed = stepTrackedSend(
      send,
      { slot: 7n, err: null, confirmationStatus: "processed" },
      { ...ctx, now: 3_000 },
    );
    expect(processed.kind === "update" && processed.next).toMatchObject({ state: "submitted", landed: true, slot: 7n });
  });

  it("notices a processed send whose block was dropped, and reports failures only once confirmed", () => {
    const forked = stepTrackedSend({ ...send, landed: true, slot: 7n }, null, ctx);
    expect(forked.kind === "update" && forked.next.landed).toBe(false);
    const failed = stepTrackedSend(
      send,
      { slot: 8n, err: { InstructionError: [0, { Custom: 1 }] }, confirmationStatus: "finalized" },
      ctx,
    );
    expect(failed.kind === "transition" && failed.next).toMatchObject({ state: "failed", error: { customCode: 1 } });
    const confirmed = { ...send, state: "confirmed" as const, landed: true, slot: 7n, fee: 5_000n };
    expect(stepTrackedSend(confirmed, null, { ...ctx, heightBefore: 500n }).kind).toBe("none");
    const final = stepTrackedSend(confirmed, { slot: 7n, err: null, confirmationStatus: "finalized" }, ctx);
    expect(final.kind === "transition" && final.next).toMatchObject({ state: "finalized", fee: 5_000n });
  });
});
