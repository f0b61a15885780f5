/**
 * signatureSubscribe: one `signatureNotification` `{err}` once the signature's slot is visible at
 * the subscription's commitment (right after subscribing when it already is), then the
 * subscription ends, as agave's. `enableReceivedNotification` is accepted; the localnet has no
 * "received" stage to report.
 */
import { checkArity, decodeParams, expectBool, expectString, optional } from "../accounts/params.ts";
import type { Chain } from "../chain/chain.ts";
import type { Commitment } from "../rpc/protocol.ts";
import { notify, withSlot, type Feed, type SubscriptionRef } from "./feed.ts";
import { commitmentOf, configObject, signatureParam } from "./pubsub-params.ts";

interface SignatureSub extends SubscriptionRef {
  signature: string;
  commitment: Commitment;
}

/**
 * Creates the signature feed; `ended` is told of a subscription that ended by itself, so the
 * dispatcher forgets its id.
 */
export function createSignatureFeed({ chain, ended }: { chain: Chain; ended: (id: number) => void }): Feed {
  const subs = new Map<number, SignatureSub>();
  const check = (sub: SignatureSub) => {
    const entry = chain.signatureStatus(sub.signature);
    const visible = chain.slotAt(sub.commitment);
    if (entry === undefined || entry.slot > visible) return;
    notify(sub, "signatureNotification", withSlot(visible, { err: entry.err }));
    subs.delete(sub.id);
    ended(sub.id);
  };
  return {
    subscribe: {
      signatureSubscribe(ref, params) {
        const request = decodeParams(() => {
          checkArity(params, 1, 2);
          const config = configObject(params[1], "RpcSignatureSubscribeConfig");
          optional(config.enableReceivedNotification, expectBool);
          return { signature: expectString(params[0]), commitment: commitmentOf(config) };
        });
        const sub = { ...ref, signature: signatureParam(request.signature), commitment: request.commitment };
        subs.set(ref.id, sub);
        // Already at the commitment: notify right after the subscription id is delivered.
        queueMicrotask(() => {
          if (subs.has(sub.id)) check(sub);
        });
      },
    },
    remove: (id) => subs.delete(id),
    onTick() {
      for (const sub of [...subs.values()]) check(sub);
    },
  };
}
