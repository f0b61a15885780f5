/**
 * Single-account reads: getAccountInfo, getMultipleAccounts, getBalance and
 * getMinimumBalanceForRentExemption. They read LiteSVM directly (a handful of addon calls), so they
 * are exact even for accounts the chain forgot to record.
 */
import type { Address } from "@solana/kit";
import { invalidParams, JsonRpcError, RpcErrorCode, type MethodTable } from "../rpc/protocol.ts";
import { MAX_ACCOUNT_DATA_LENGTH } from "./svm-store.ts";
import { encodeAccount, type UiAccount } from "./encode-account.ts";
import { jsonU64 } from "./json.ts";
import {
  accountInfoConfig,
  checkArity,
  commitmentConfig,
  contextConfig,
  contextSlot,
  decodeParams,
  expectObject,
  expectString,
  expectUnsigned,
  invalidType,
  optional,
  verifyPubkey,
  type AccountInfoConfig,
} from "./params.ts";
import { rpcResponse } from "./response.ts";
import { encodeBase58, type ParsedPubkey } from "./base58.ts";
import { liveMintLookup, type AccountServices } from "./services.ts";

/** agave's default `--rpc-max-multiple-accounts`. */
export const MAX_MULTIPLE_ACCOUNTS = 100;

/** Reads and encodes one account, or null when LiteSVM has none. */
function readEncoded(
  services: AccountServices,
  pubkey: ParsedPubkey,
  config: AccountInfoConfig,
  fallback: "binary" | "base64",
): UiAccount | null {
  const account = services.store.read(pubkey.bytes);
  if (account === null) return null;
  const view = { ...account, address: pubkey.address, owner: encodeBase58(account.owner) as Address };
  return encodeAccount(view, config.encoding ?? fallback, config.dataSlice, liveMintLookup(services.store));
}

/** Method handlers for single-account reads. */
export function createAccountReadMethods(services: AccountServices): MethodTable {
  return {
    getAccountInfo(params, ctx) {
      const { address, config } = decodeParams(() => {
        checkArity(params, 1, 2);
        return { address: expectString(params[0]), config: accountInfoConfig(params[1]) };
      });
      const pubkey = verifyPubkey(address);
      const slot = contextSlot(ctx, config);
      return rpcResponse(slot, services.apiVersion, readEncoded(services, pubkey, config, "binary"));
    },

    getMultipleAccounts(params, ctx) {
      const { addresses, config } = decodeParams(() => {
        checkArity(params, 1, 2);
        if (!Array.isArray(params[0])) throw invalidType(params[0], "a sequence");
        return { addresses: params[0].map(expectString), config: accountInfoConfig(params[1]) };
      });
      if (addresses.length > MAX_MULTIPLE_ACCOUNTS) {
        throw invalidParams(`Too many inputs provided; max ${MAX_MULTIPLE_ACCOUNTS}`);
      }
      const pubkeys = addresses.map(verifyPubkey);
      const slot = contextSlot(ctx, config);
      return rpcResponse(
        slot,
        services.apiVersion,
        pubkeys.map((pubkey) => readEncoded(services, pubkey, config, "base64")),
      );
    },

    getBalance(params, ctx) {
      const { address, config } = decodeParams(() => {
        checkArity(params, 1, 2);
        const config = optional(params[1], (v) => expectObject(v, "RpcContextConfig")) ?? {};
        return { address: expectString(params[0]), config: contextConfig(config) };
      });
      const pubkey = verifyPubkey(address);
      const slot = contextSlot(ctx, config);
      return rpcResponse(slot, services.apiVersion, jsonU64(services.store.read(pubkey.bytes)?.lamports ?? 0n));
    },

    getMinimumBalanceForRentExemption(params) {
      const dataLength = decodeParams(() => {
        checkArity(params, 1, 2);
        commitmentConfig(params[1]);
        return expectUnsigned(params[0], "usize");
      });
      // agave: data lengths beyond MAX_PERMITTED_DATA_LENGTH are an invalid request.
      if (dataLength > MAX_ACCOUNT_DATA_LENGTH) throw new JsonRpcError(RpcErrorCode.INVALID_REQUEST, "Invalid request");
      return jsonU64(services.store.minimumBalance(BigInt(dataLength)));
    },
  };
}
