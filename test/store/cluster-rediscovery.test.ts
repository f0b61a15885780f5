/**
 * The one private member of node-redis Solgate calls (src/store/cluster-rediscovery.ts): an upgrade that
 * renames or removes it must fail here, by name, not turn the cluster failover fix off in silence.
 */
import { describe, expect, it } from "vitest";
import { createCluster } from "redis";
import { SLOT_REDISCOVERY_MEMBER, hasSlotRediscovery } from "../../src/store/cluster-rediscovery.ts";

describe("node-redis' private slot rediscovery", () => {
  it(`still exists: ${SLOT_REDISCOVERY_MEMBER}`, () => {
    // Not connected: the member is made with the client.
    const cluster = createCluster({ rootNodes: [{ url: "redis://127.0.0.1:1" }] });
    expect(
      hasSlotRediscovery(cluster),
      `node-redis no longer has ${SLOT_REDISCOVERY_MEMBER}; find its replacement and change src/store/cluster-rediscovery.ts`,
    ).toBe(true);
  });

  it("is reported missing when it is gone", () => {
    const cluster = createCluster({ rootNodes: [{ url: "redis://127.0.0.1:1" }] });
    Object.defineProperty(cluster, "_slots", { value: {} });
    expect(hasSlotRediscovery(cluster)).toBe(false);
  });
});
