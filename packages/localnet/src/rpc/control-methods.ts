/**
 * Control methods for tests: `localnet_setFaults`, `localnet_getFaults`, `localnet_status`.
 * They are served beside the node methods but never subject to faults.
 */
import type { Chain } from "../chain/chain.ts";
import type { Faults } from "../faults.ts";
import { expectArity } from "./params.ts";
import type { MethodTable } from "./protocol.ts";

/** Creates the control method table. */
export function createControlMethods({
  chain,
  faults,
  loaded = () => true,
}: {
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
      };
    },
  };
}
