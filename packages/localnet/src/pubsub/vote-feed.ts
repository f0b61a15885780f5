/**
 * voteSubscribe, as agave serves it when the validator runs with
 * `--rpc-pubsub-enable-vote-subscription` (`LOCALNET_VOTE_SUBSCRIPTION=1` here; without it the
 * method is not registered and answers -32601 "Method not found", as agave's `vote_subscribe` does
 * when `enable_vote_subscription` is off). No params; each new vote of the validator is sent as
 * `voteNotification` with agave's `RpcVote` `{votePubkey, slots, hash, timestamp, signature}` and no
 * context, at no commitment (agave notifies a vote when its listener sees it, before any
 * confirmation). The localnet's validator votes on every block, so one notification per block.
 */
import { checkArity, decodeParams } from "../accounts/params.ts";
import type { Chain } from "../chain/chain.ts";
import { notify, type Feed, type SubscriptionRef } from "./feed.ts";

/** Creates the vote feed. */
export function createVoteFeed({ chain }: { chain: Chain }): Feed {
  const subs = new Map<number, SubscriptionRef>();
  return {
    subscribe: {
      voteSubscribe(ref, params) {
        decodeParams(() => checkArity(params, 0, 0));
        subs.set(ref.id, ref);
      },
    },
    remove: (id) => subs.delete(id),
    onTick({ block }) {
      if (subs.size === 0) return;
      const vote = chain.cluster.voteOn(block.slot, block.blockhash, block.blockTime);
      for (const sub of subs.values()) notify(sub, "voteNotification", vote);
    },
  };
}
