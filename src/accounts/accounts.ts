/**
 * One account by its address: balance, owner, and data decoded as program-account items decode it
 * (src/programs/account-mapping.ts). Read at `confirmed`, the commitment listings use.
 */
import type { GetAccountInfoApi, Rpc } from "@solana/kit";
import { SolgateError } from "../errors.ts";
import { lamportsToSol, spaceOf, toAccountData } from "../programs/account-mapping.ts";
import type { AccountData, RpcAccount } from "../programs/account-mapping.ts";
import { assertAddress } from "../request-checks.ts";

/** One account. */
export interface AccountInfo {
  address: string;
  lamports: bigint;
  /** lamports / 1e9, for display. */
  sol: number;
  space: bigint;
  owner: string;
  executable: boolean;
  data: AccountData;
}

/** Looks accounts up. */
export interface Accounts {
  /**
   * The account at `address`.
   * @throws SolgateError INVALID_ADDRESS, NOT_FOUND (no account there), and the upstream's
   *   UPSTREAM_UNAVAILABLE / RATE_LIMITED.
   */
  get(address: string): Promise<AccountInfo>;
}

/** Creates the core over a chain's upstream. */
export function createAccounts(deps: { upstream: { rpc: Rpc<GetAccountInfoApi> } }): Accounts {
  const { rpc } = deps.upstream;
  return {
    async get(address) {
      const key = assertAddress(address, "address");
      const { value } = await rpc.getAccountInfo(key, { encoding: "jsonParsed", commitment: "confirmed" }).send();
      if (value === null) throw new SolgateError("NOT_FOUND", `no account exists at ${key}`, { address: key });
      const account = value as unknown as RpcAccount & { executable: boolean };
      const lamports = BigInt(account.lamports);
      return {
        address: key,
        lamports,
        sol: lamportsToSol(lamports),
        space: spaceOf(account),
        owner: account.owner,
        executable: account.executable,
        data: toAccountData(account),
      };
    },
  };
}
