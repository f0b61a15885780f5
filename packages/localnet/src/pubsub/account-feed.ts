/**
 * accountSubscribe and programSubscribe. LiteSVM keeps only the latest state, so the accounts each
 * block wrote are snapshotted right after it (a journal by slot) while any subscription of this
 * family is open; when a slot becomes visible at a subscription's commitment, the snapshot of that
 * slot is what is sent, as agave reads the bank at the commitment slot.
 *
 * - accountSubscribe: one notification per commitment advance in which the account was written
 *   (agave: the account's modified slot changed), context slot = the commitment slot; data slices
 *   are ignored, as agave's `filter_account_result` ignores them; a deleted account is the default
 *   account (0 lamports, System owner).
 * - programSubscribe: one notification per written account owned by the program that passes the
 *   filters (agave's `get_program_accounts_modified_since_parent` + `filter_program_results`);
 *   jsonParsed over a token program leaves out accounts that do not parse.
 */
import type { Address } from "@solana/kit";
import {
  encodeAccount,
  encodeParsedTokenAccount,
  type AccountEncoding,
  type EncodableAccount,
  type MintLookup,
} from "../accounts/encode-account.ts";
import { decodeFilters, filtersAllow, verifyFilters, type Filter } from "../accounts/filters.ts";
import { accountInfoConfig, checkArity, decodeParams, expectBool, expectString, optional } from "../accounts/params.ts";
import { isTokenProgram, SYSTEM_PROGRAM } from "../accounts/program-ids.ts";
import type { Chain } from "../chain/chain.ts";
import type { AccountSnapshot } from "../chain/executor.ts";
import type { Commitment } from "../rpc/protocol.ts";
import { notify, slotsIn, withSlot, type Feed, type SubscriptionRef } from "./feed.ts";
import { configObject, pubkeyParam } from "./pubsub-params.ts";

interface AccountSub extends SubscriptionRef {
  kind: "account";
  address: string;
  commitment: Commitment;
  encoding: AccountEncoding;
}

interface ProgramSub extends SubscriptionRef {
  kind: "program";
  program: string;
  commitment: Commitment;
  encoding: AccountEncoding;
  filters: Filter[];
}

/** agave's `MAX_BASE58_BYTES` and the text `encode_bs58` writes beyond it. */
const MAX_BASE58_BYTES = 128;
const BASE58_TOO_LARGE = "error: data too large for bs58 encoding";

/**
 * `UiAccount::encode` as the notifier calls it: unlike the HTTP `encode_account`, oversized base58
 * is not an error but the text agave's `encode_bs58` puts in its place.
 */
export function encodeNotifiedAccount(account: EncodableAccount, encoding: AccountEncoding, mints: MintLookup) {
  if ((encoding === "base58" || encoding === "binary") && account.data.length > MAX_BASE58_BYTES) {
    const ui = encodeAccount(account, "base64", undefined, mints);
    return { ...ui, data: encoding === "binary" ? BASE58_TOO_LARGE : [BASE58_TOO_LARGE, "base58"] };
  }
  return encodeAccount(account, encoding, undefined, mints);
}

function encodable(address: string, snapshot: AccountSnapshot | null): EncodableAccount {
  if (snapshot === null) {
    return { address, owner: SYSTEM_PROGRAM, lamports: 0n, executable: false, rentEpoch: 0n, data: new Uint8Array(0) };
  }
  return { address, ...snapshot, owner: snapshot.owner as Address };
}

/** Creates the account and program feed over a chain. */
export function createAccountFeed(deps: { chain: Chain; mints: MintLookup }): Feed {
  const { chain, mints } = deps;
  const subs = new Map<number, AccountSub | ProgramSub>();
  /** Addresses written since the last block (only while someone listens). */
  const pending = new Set<string>();
  /** Per slot, the state of each account written in it, right after that slot's block. */
  const journal = new Map<bigint, Map<string, AccountSnapshot | null>>();

  const stopTouched = chain.onAccountsTouched(({ addresses }) => {
    if (subs.size === 0) return;
    for (const address of addresses) pending.add(address);
  });

  const stateIn = (
    range: { after: bigint; upTo: bigint },
    address: string,
  ): { found: boolean; snapshot: AccountSnapshot | null } => {
    for (let s = range.upTo; s > range.after; s--) {
      const written = journal.get(s);
      if (written?.has(address)) return { found: true, snapshot: written.get(address)! };
    }
    return { found: false, snapshot: null };
  };

  const programNotifications = (sub: ProgramSub, slot: bigint, written: Map<string, AccountSnapshot | null>) => {
    const parsedTokens = sub.encoding === "jsonParsed" && isTokenProgram(sub.program);
    for (const [address, snapshot] of written) {
      if (snapshot === null || snapshot.owner !== sub.program || !filtersAllow(sub.filters, snapshot.data)) continue;
      const account = encodable(address, snapshot);
      const ui = parsedTokens
        ? encodeParsedTokenAccount(account, mints)
        : encodeNotifiedAccount(account, sub.encoding, mints);
      if (ui === null) continue;
      notify(sub, "programNotification", withSlot(slot, { pubkey: address, account: ui }));
    }
  };

  return {
    subscribe: {
      accountSubscribe(ref, params) {
        const request = decodeParams(() => {
          checkArity(params, 1, 2);
          return { address: expectString(params[0]), config: accountInfoConfig(params[1]) };
        });
        const address = pubkeyParam(request.address, "pubkey");
        subs.set(ref.id, {
          ...ref,
          kind: "account",
          address,
          commitment: request.config.commitment,
          encoding: request.config.encoding ?? "binary",
        });
      },
      programSubscribe(ref, params) {
        const request = decodeParams(() => {
          checkArity(params, 1, 2);
          const raw = configObject(params[1], "RpcProgramAccountsConfig");
          optional(raw.withContext, expectBool);
          return {
            program: expectString(params[0]),
            config: accountInfoConfig(raw, "RpcProgramAccountsConfig"),
            filters: decodeFilters(raw.filters),
          };
        });
        // agave verifies the filters before it parses the program key.
        const filters = verifyFilters(request.filters);
        const program = pubkeyParam(request.program, "pubkey");
        subs.set(ref.id, {
          ...ref,
          kind: "program",
          program,
          commitment: request.config.commitment,
          encoding: request.config.encoding ?? "binary",
          filters,
        });
      },
    },
    remove(id) {
      const had = subs.delete(id);
      if (subs.size === 0) {
        pending.clear();
        journal.clear();
      }
      return had;
    },
    onTick(tick) {
      if (subs.size === 0) return;
      const written = new Map<string, AccountSnapshot | null>();
      for (const address of pending) written.set(address, chain.executor.readAccount(address));
      pending.clear();
      journal.set(tick.block.slot, written);
      for (const sub of subs.values()) {
        const range = tick.visible[sub.commitment];
        if (range.upTo <= range.after) continue;
        if (sub.kind === "account") {
          const { found, snapshot } = stateIn(range, sub.address);
          if (!found) continue;
          notify(
            sub,
            "accountNotification",
            withSlot(range.upTo, encodeNotifiedAccount(encodable(sub.address, snapshot), sub.encoding, mints)),
          );
        } else {
          for (const slot of slotsIn(range)) {
            const inSlot = journal.get(slot);
            if (inSlot !== undefined) programNotifications(sub, slot, inSlot);
          }
        }
      }
      // Every commitment has seen slots up to the finalized one.
      for (const slot of journal.keys()) if (slot <= tick.visible.finalized.upTo) journal.delete(slot);
    },
    close() {
      stopTouched();
    },
  };
}
