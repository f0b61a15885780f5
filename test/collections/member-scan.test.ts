/**
 * The keyset walk against scripted providers that misbehave in ways a real one cannot be made to
 * on demand: ignoring `after`, sending unverified or foreign items, returning fewer than asked.
 */
import { describe, expect, it } from "vitest";
import bs58 from "bs58";
import { scanMembers } from "../../src/collections/member-scan.ts";
import type { CollectionsDas, DasAsset, GroupPageRequest } from "../../src/collections/das-client.ts";

const COLLECTION = "8Rt3Ayqth4DAiPnW9MDFi63TiQJHmohfTWLMQFHi4KZH";
const OTHER = "J1S9H3QjnRtBbbuD4HjPV6RpRhwuk4zKbxsnCHuTgh9w";

/** 40 ids in ascending byte order. */
const ids = Array.from({ length: 40 }, (_, i) =>
  bs58.encode(Uint8Array.from({ length: 32 }, (_, j) => (j === 0 ? i + 1 : 7))),
);
const member = (id: string, group = COLLECTION, verified?: boolean): DasAsset => ({
  id,
  grouping: [{ group_key: "collection", group_value: group, ...(verified === undefined ? {} : { verified }) }],
});

/** A provider over `items` that honours `after` and `limit` unless told otherwise, and records requests. */
function provider(items: DasAsset[], quirks: { ignoreAfter?: boolean } = {}) {
  const asked: GroupPageRequest[] = [];
  const das: Pick<CollectionsDas, "getAsset" | "getGroupPage"> = {
    getAsset: async () => null,
    async getGroupPage(request) {
      asked.push(request);
      const start =
        request.after === undefined || quirks.ignoreAfter ? 0 : items.findIndex((a) => a.id === request.after) + 1;
      return items.slice(start, start + request.limit);
    },
  };
  return { das, asked };
}

async function scan(das: Pick<CollectionsDas, "getGroupPage">, want: number, after?: string, maxCalls = 4) {
  const found: string[] = [];
  const result = await scanMembers(das, {
    collection: COLLECTION,
    after,
    want,
    maxCalls,
    onMember: (a) => found.push(a.id),
  });
  return { ...result, found };
}

describe("scanMembers", () => {
  it("asks for one more than wanted, leaves it for the next page, and knows the last page", async () => {
    const { das, asked } = provider(ids.map((id) => member(id)));
    const first = await scan(das, 10);
    expect(asked[0].limit).toBe(11);
    expect(first).toMatchObject({ found: ids.slice(0, 10), last: ids[9], ended: false });
    const rest = await scan(das, 100, first.last);
    expect(rest).toMatchObject({ found: ids.slice(10), ended: true, calls: 1 });
  });

  it("drops unverified, foreign and burnt items, still moves past them, and fetches more to fill the page", async () => {
    const items = ids.map((id, i) =>
      i < 6
        ? member(id, COLLECTION, false)
        : i < 9
          ? member(id, OTHER)
          : i === 9
            ? { ...member(id), burnt: true }
            : member(id),
    );
    const { das, asked } = provider(items);
    const page = await scan(das, 5);
    expect(page.found).toEqual(ids.slice(10, 15));
    // 6 asked, all unverified; 6 more: 3 foreign, 1 burnt, 2 members; 4 more: 3 members, one left over.
    expect(asked.map((r) => [r.after, r.limit])).toEqual([
      [undefined, 6],
      [ids[5], 6],
      [ids[11], 4],
    ]);
    expect(page.last).toBe(ids[14]);
  });

  it("stops at its call bound with what it has, and the position still moves on", async () => {
    const items = ids.map((id, i) => (i < 30 ? member(id, COLLECTION, false) : member(id)));
    const { das } = provider(items);
    const page = await scan(das, 3, undefined, 2);
    expect(page).toMatchObject({ found: [], calls: 2, ended: false, last: ids[7] });
  });

  it("ends rather than loop when a provider ignores `after`", async () => {
    const { das } = provider(
      ids.map((id) => member(id)),
      { ignoreAfter: true },
    );
    const first = await scan(das, 5);
    const second = await scan(das, 5, first.last);
    // Only what lies past the position counts; a page with nothing new ends the listing.
    expect(second).toMatchObject({ found: [ids[5]], ended: true, calls: 2 });
  });

  it("skips ids that are not 32-byte base58 and items out of order", async () => {
    const items = [member(ids[3]), member("not-an-id"), member(ids[1]), member(ids[3]), member(ids[4])];
    const { das } = provider(items);
    expect((await scan(das, 10)).found).toEqual([ids[3], ids[4]]);
  });
});
