import { afterEach, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { address } from "@solana/kit";
import { createUpstream } from "../../src/upstream/upstream.ts";
import type { Upstream } from "../../src/upstream/upstream.ts";
import { formatUnits, lamportsToSol, toProgramAccountItem } from "../../src/programs/account-mapping.ts";
import type { RpcAccount } from "../../src/programs/account-mapping.ts";
import { startFaultServer } from "../upstream/fault-server.ts";
import type { FaultServer } from "../upstream/fault-server.ts";

const tokens = (name: string) => readFileSync(new URL(`../fixtures/solana/tokens/${name}`, import.meta.url), "utf8");
const validator = JSON.parse(tokens("spl_token_fixture_accounts_with_validator_jsonParsed.json")) as {
  accounts: Record<string, { account: unknown; [k: string]: unknown }>;
};
const mainnet = JSON.parse(tokens("real_mainnet_token_accounts_with_derived_jsonParsed.json")) as {
  accounts: {
    pubkey: string;
    derived_getAccountInfo_jsonParsed_value: {
      data: { parsed: { info: { tokenAmount: { amount: string; decimals: number; uiAmountString: string } } } };
    };
  }[];
};

let node: FaultServer | undefined;
let upstream: Upstream | undefined;
afterEach(async () => {
  await upstream?.close();
  await node?.close();
});

/** Serves `value` as a getMultipleAccounts answer and fetches it through the real upstream (kit parsing, bigints). */
async function throughUpstream(values: unknown[], addresses: string[]): Promise<(RpcAccount | null)[]> {
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, result: { context: { slot: 1 }, value: values } });
  node = await startFaultServer({ kind: "json", body });
  upstream = createUpstream({ chain: "test", rpcUrls: [node.url] });
  const { value } = await upstream.rpc
    .getMultipleAccounts(
      addresses.map((a) => address(a)),
      { encoding: "jsonParsed" },
    )
    .send();
  return value as unknown as (RpcAccount | null)[];
}

describe("account mapping from real node output", () => {
  it("maps a real mainnet jsonParsed token account", async () => {
    const recorded = JSON.parse(
      readFileSync(
        new URL("../fixtures/solana/rpc/getAccountInfo_jsonParsed_token_account_slot140702417.json", import.meta.url),
        "utf8",
      ),
    );
    const [account] = await throughUpstream([recorded.result.value], ["11111111111111111111111111111111"]);
    const item = toProgramAccountItem("X", account!);
    expect(item).toEqual({
      address: "X",
      lamports: 2039280n,
      sol: 0.00203928,
      space: 165n,
      data: {
        format: "parsed",
        program: "spl-token",
        parsed: {
          type: "account",
          info: {
            mint: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
            owner: "vines1vzrYbzLMRdu58ou5XTby4qAqVRLmqo36NKPTg",
            tokenAmount: { raw: 36010000000n, decimals: 6, ui: 36010, uiString: "36010" },
            state: "initialized",
          },
        },
      },
    });
  });

  it("maps validator jsonParsed output for Token and Token-2022 accounts, and gives mints as the validator parsed them", async () => {
    const entries = Object.entries(validator.accounts).filter(([, v]) => v.expected_getAccountInfo_jsonParsed);
    const values = entries.map(([, v]) => (v.expected_getAccountInfo_jsonParsed as { value: unknown }).value);
    const accounts = await throughUpstream(
      values,
      entries.map(([k]) => k),
    );
    const byAddress = new Map(entries.map(([k], i) => [k, toProgramAccountItem(k, accounts[i]!)]));

    const tokenAccount = byAddress.get("AyGCwnwxQMCqaU4ixReHt8h5W4dwmxU7eM3BEQBdWVca");
    expect(tokenAccount?.data).toEqual({
      format: "parsed",
      program: "spl-token",
      parsed: {
        type: "account",
        info: {
          mint: "Gh9ZwEmdLJ8DscKNTkTqPbNwLNNBjuSzaG9Vp2KGtKJr",
          owner: "6UsGbaMgchgj4wiwKKuE1v5URHdcDfEiMSM25QpesKir",
          tokenAmount: { raw: 9999999779500000n, decimals: 6, ui: 9999999779.5, uiString: "9999999779.5" },
          state: "initialized",
        },
      },
    });
    expect(tokenAccount?.space).toBe(165n);
    // Everything else the validator parsed (mints of both programs, with their extensions) comes out
    // as the validator wrote it: type and info, byte for byte the same JSON.
    let others = 0;
    for (const [k, v] of entries) {
      const data = (
        v.expected_getAccountInfo_jsonParsed as {
          value: { data: { program: string; parsed: { type: string; info: unknown } } };
        }
      ).value.data;
      expect(byAddress.get(k)?.data.format).toBe("parsed");
      if (data.parsed.type === "account") continue;
      others++;
      expect(byAddress.get(k)?.data).toEqual({
        format: "parsed",
        program: data.program,
        parsed: { type: data.parsed.type, fields: unsafeAsStrings(data.parsed.info) },
      });
    }
    expect(others).toBeGreaterThanOrEqual(2);
    expect(byAddress.get("Gh9ZwEmdLJ8DscKNTkTqPbNwLNNBjuSzaG9Vp2KGtKJr")?.data).toMatchObject({
      program: "spl-token",
      parsed: { type: "mint" },
    });
  });

  it("gives other accounts as base64 with their size", async () => {
    const recorded = JSON.parse(
      readFileSync(
        new URL(
          "../fixtures/solana/rpc/getMultipleAccounts_mixed_jsonParsed_and_base64_slot167617386.json",
          import.meta.url,
        ),
        "utf8",
      ),
    );
    const accounts = await throughUpstream(recorded.result.value, [
      "So11111111111111111111111111111111111111112",
      "2WRuhE4GJFoE23DYzp2ij6ZnuQ8p9mJeU6gDgfsjR4or",
    ]);
    const raw = recorded.result.value[1];
    const item = toProgramAccountItem("B", accounts[1]!);
    expect(item).toEqual({
      address: "B",
      lamports: 998763433n,
      sol: 0.998763433,
      space: BigInt(Buffer.from(raw.data[0], "base64").length),
      data: { format: "base64", base64: raw.data[0] },
    });
  });

  it("writes exact amounts as nodes write uiAmountString", () => {
    for (const a of mainnet.accounts) {
      const { amount, decimals, uiAmountString } =
        a.derived_getAccountInfo_jsonParsed_value.data.parsed.info.tokenAmount;
      expect(formatUnits(BigInt(amount), decimals)).toBe(uiAmountString);
    }
    expect(formatUnits(9999999779500000n, 6)).toBe("9999999779.5");
    expect(formatUnits(1n, 9)).toBe("0.000000001");
    expect(formatUnits(0n, 6)).toBe("0");
  });

  it("formats amounts as raw / 10^decimals in exact decimal arithmetic, for every u64 size and decimals", () => {
    // The definition, in bigint arithmetic: whole part, then the fraction without trailing zeros.
    const reference = (raw: bigint, decimals: number) => {
      const scale = 10n ** BigInt(decimals);
      const fraction = (raw % scale).toString().padStart(decimals, "0").replace(/0+$/, "");
      return decimals === 0 || fraction.length === 0 ? (raw / scale).toString() : `${raw / scale}.${fraction}`;
    };
    const amounts = [0n, 1n, 9n, 10n, 100n, 123_456_789n, 10n ** 18n, 2n ** 53n + 1n, 2n ** 64n - 1n];
    for (let i = 0; i < 2000; i++)
      amounts.push(BigInt.asUintN(64, BigInt(Math.floor(Math.random() * 2 ** 53)) << BigInt(i % 12)));
    for (let i = 0; i < 200; i++) amounts.push(10n ** BigInt(i % 20) * BigInt(i));
    for (const raw of amounts) {
      for (let decimals = 0; decimals <= 20; decimals++)
        expect(formatUnits(raw, decimals)).toBe(reference(raw, decimals));
    }
    expect(formatUnits(1_500_000n, 6)).toBe("1.5");
    expect(formatUnits(42n, 5)).toBe("0.00042");
    expect(formatUnits(2n ** 64n - 1n, 9)).toBe("18446744073.709551615");
  });

  it("converts lamports to SOL beyond 2^53 lamports", () => {
    expect(lamportsToSol(1_500_000_000n)).toBe(1.5);
    expect(lamportsToSol(18446744073709551615n)).toBeCloseTo(18446744073.709553, 3);
  });
});

/**
 * The validator's JSON with integers beyond 2^53 written as decimal strings, as Solgate gives them
 * so that no client rounds them (the fixture's are exact doubles, so BigInt recovers them).
 */
function unsafeAsStrings(value: unknown): unknown {
  if (typeof value === "number" && Number.isInteger(value) && !Number.isSafeInteger(value))
    return BigInt(value).toString();
  if (Array.isArray(value)) return value.map(unsafeAsStrings);
  if (typeof value === "object" && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, unsafeAsStrings(v)]));
  return value;
}
