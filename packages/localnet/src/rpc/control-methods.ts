/**
 * Control methods for tests: `localnet_setFaults`, `localnet_getFaults`, `localnet_status`,
 * `localnet_setSendPathDropRate` (an extra send port's drop rate, by its index in LOCALNET_SEND_PORTS),
 * `localnet_setTrafficPriceScale` (multiplies the background traffic's prices from now on: a fee market that jumps
 * mid-run, for the fee-ladder bench).
 * They are served beside the node methods but never subject to faults.
 */
import type { Chain } from "../chain/chain.ts";
import type { Faults } from "../faults.ts";
import { expectArity } from "./params.ts";
import { invalidParams, type MethodTable } from "./protocol.ts";

/** Creates the control method table. */
export function createControlMethods({
  chain,
  faults,
  loaded = () => true,
  sendPaths = [],
  setTrafficPriceScale,
}: {
  /** Scales the background traffic's prices (world-hooks.ts); absent when the process runs no traffic hooks. */
  setTrafficPriceScale?: (scale: number) => number;
  /** The extra send-only ports (filled once they listen), each with its own faults. */
  sendPaths?: readonly { url: string; faults: Faults }[];
  chain: Chain;
  faults: Faults;
  /** Whether the seeding's background load has finished (localnet.ts); always true without one. */
  loaded?: () => boolean;
}): MethodTable {
  return {
    localnet_setFaults(params) {
      expectArity(params, 1, 1);
      return faults.set(params[0]);
    },
    localnet_getFaults(params) {
      expectArity(params, 0, 0);
      return faults.get();
    },
    localnet_status(params) {
      expectArity(params, 0, 0);
      return {
        ...chain.status(),
        faults: faults.get(),
        faucet: chain.faucet,
        genesisSlot: chain.genesisSlot,
        loaded: loaded(),
        sendPaths: sendPaths.map((path) => ({ url: path.url, dropRate: path.faults.get().dropRate })),
        bundles: { pending: chain.bundles.pending },
      };
    },
    localnet_setSendPathDropRate(params) {
      expectArity(params, 2, 2);
      const [index, dropRate] = params;
      if (typeof index !== "number" || !Number.isInteger(index) || index < 0 || index >= sendPaths.length) {
        throw invalidParams(`Invalid params: no send path ${String(index)} (there are ${sendPaths.length})`);
      }
      const settings = sendPaths[index]!.faults.set({ dropRate });
      return { url: sendPaths[index]!.url, dropRate: settings.dropRate };
    },
    localnet_setTrafficPriceScale(params) {
      expectArity(params, 1, 1);
      const [scale] = params;
      if (typeof scale !== "number" || !Number.isFinite(scale) || scale <= 0 || scale > 1_000)
        throw invalidParams(
          `Invalid params: the price scale must be a number above 0 and at most 1000, got ${String(scale)}`,
        );
      if (setTrafficPriceScale === undefined)
        throw invalidParams("Invalid params: this localnet runs no background traffic");
      try {
        return { priceScale: setTrafficPriceScale(scale) };
      } catch (error) {
        throw invalidParams(`Invalid params: ${(error as Error).message}`);
      }
    },
  };
}
