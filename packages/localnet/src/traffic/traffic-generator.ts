/**
 * Background traffic: every slot, transfers signed by a few funded wallets, priced from a
 * realistic spread, some write-locking hot accounts (whose fee market is dearer), some failing
 * on chain. Deterministic from the seed: the same blockhashes give the same transactions. The
 * congestion profiles (traffic-options.ts) draw requests and bids from the mainnet fit
 * (mainnet-distribution.ts) at a rate above the block's and the hot accounts' limits.
 */
import bs58 from "bs58";
import { SYSTEM_PROGRAM } from "../world/program-ids.ts";
import { createRandom, deriveKey, deriveKeypair, type SeededKeypair } from "../world/seeded-random.ts";
import type { WorldAccount } from "../world/world-types.ts";
import { drawUnitLimit } from "./mainnet-distribution.ts";
import { createPriceSampler, MAX_PRICE } from "./price-sampler.ts";
import type { TrafficOptions } from "./traffic-options.ts";
import { buildTransfer } from "./transfer-transaction.ts";

/** Rent-exempt minimum of a zero-data system account. */
const SYSTEM_ACCOUNT_RENT = 890_880n;
const WALLET_LAMPORTS = 1_000_000_000_000n;
/** Far beyond any wallet's balance: the transfer fails with InstructionError Custom(1). */
const FAILING_LAMPORTS = 1n << 62n;

/** The accounts traffic needs on chain before it starts. */
export interface TrafficPlan {
  wallets: SeededKeypair[];
  hot: string[];
  cold: string[];
  /** Funded wallets, hot and cold accounts, ready to seed. */
  accounts: WorldAccount[];
}

export function planTraffic(options: TrafficOptions): TrafficPlan {
  const wallets = Array.from({ length: options.wallets }, (_, i) => deriveKeypair(options.seed, "traffic/wallet", i));
  const hot = Array.from({ length: options.hotAccounts }, (_, i) =>
    bs58.encode(deriveKey(options.seed, "traffic/hot", i)),
  );
  const cold = Array.from({ length: options.coldAccounts }, (_, i) =>
    bs58.encode(deriveKey(options.seed, "traffic/cold", i)),
  );
  const system = (address: string, lamports: bigint): WorldAccount => ({
    address,
    owner: SYSTEM_PROGRAM,
    lamports,
    data: new Uint8Array(0),
    executable: false,
  });
  return {
    wallets,
    hot,
    cold,
    accounts: [
      ...wallets.map((w) => system(w.address, WALLET_LAMPORTS)),
      ...[...hot, ...cold].map((a) => system(a, SYSTEM_ACCOUNT_RENT)),
    ],
  };
}

/** One generated transaction and what it was meant to be (for tests and stats). */
export interface GeneratedTransaction {
  wire: Uint8Array;
  payer: string;
  recipient: string;
  hot: boolean;
  failing: boolean;
  unitPrice: bigint;
  unitLimit: number;
}

export interface TrafficGenerator {
  /** The next slot's transactions, built on `blockhash` (base58). */
  next(blockhash: string): GeneratedTransaction[];
  /** Transactions generated so far. */
  readonly generated: number;
  /**
   * Multiplies every price drawn from now on (default 1): a market whose fees jump at run time
   * (`localnet_setTrafficPriceScale`). The draws themselves are unchanged, so a run stays repeatable.
   */
  priceScale: number;
}

export function createTrafficGenerator(plan: TrafficPlan, options: TrafficOptions): TrafficGenerator {
  const random = createRandom(`${options.seed}/traffic`);
  const prices = createPriceSampler(random, options);
  const hotKeys = plan.hot.map((a) => bs58.decode(a));
  const coldKeys = plan.cold.map((a) => bs58.decode(a));
  let generated = 0;
  let priceScale = 1;
  return {
    next(blockhash) {
      const hash = bs58.decode(blockhash);
      const out: GeneratedTransaction[] = [];
      if (plan.wallets.length === 0 || (hotKeys.length === 0 && coldKeys.length === 0)) return out;
      for (let i = 0; i < options.ratePerSlot; i++) {
        const payer = plan.wallets[generated % plan.wallets.length];
        const hot = hotKeys.length > 0 && (coldKeys.length === 0 || random.next() < options.hotShare);
        const pool = hot ? hotKeys : coldKeys;
        const recipientIndex = random.int(pool.length);
        const failing = random.next() < options.failureShare;
        const drawn = prices.sample(hot);
        const unitPrice = priceScale === 1 ? drawn : scaledPrice(drawn, priceScale);
        const unitLimit = options.model === "mainnet" ? drawUnitLimit(random) : 1_000 + random.int(40) * 500;
        // The counter keeps every transaction distinct (same payer, recipient and price would
        // otherwise repeat a signature within one blockhash).
        const lamports = failing ? FAILING_LAMPORTS : 1_000n + BigInt(generated % 1_000_000);
        const wire = buildTransfer({
          payer,
          recipient: pool[recipientIndex],
          lamports,
          unitLimit,
          unitPrice,
          blockhash: hash,
        });
        out.push({
          wire,
          payer: payer.address,
          recipient: (hot ? plan.hot : plan.cold)[recipientIndex],
          hot,
          failing,
          unitPrice,
          unitLimit,
        });
        generated++;
      }
      return out;
    },
    get generated() {
      return generated;
    },
    get priceScale() {
      return priceScale;
    },
    set priceScale(scale: number) {
      if (!(Number.isFinite(scale) && scale > 0)) throw new RangeError(`price scale must be above 0, got ${scale}`);
      priceScale = scale;
    },
  };
}

/** A drawn price times the scale, within the sampler's ceiling (an unpriced transaction stays unpriced). */
function scaledPrice(price: bigint, scale: number): bigint {
  if (price === 0n) return 0n;
  const scaled = BigInt(Math.max(1, Math.round(Number(price) * scale)));
  return scaled > MAX_PRICE ? MAX_PRICE : scaled;
}
