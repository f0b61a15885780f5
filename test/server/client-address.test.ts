/** The per-client cap's grouping of addresses: IPv4 per address (mapped or not), IPv6 per /64. */
import { describe, expect, it } from "vitest";
import { addressGroup } from "../../src/server/client-address.ts";

describe("addressGroup", () => {
  it("keeps an IPv4 address as it is, and an IPv4-mapped IPv6 address as its IPv4 address", () => {
    expect(addressGroup("203.0.113.7")).toBe("203.0.113.7");
    expect(addressGroup("::ffff:203.0.113.7")).toBe("203.0.113.7");
    expect(addressGroup("::ffff:cb00:7107")).toBe("203.0.113.7");
    // Two IPv4 clients behind a dual-stack socket are two clients, not one ::ffff:0:0/96 group.
    expect(addressGroup("::ffff:203.0.113.8")).not.toBe(addressGroup("::ffff:203.0.113.7"));
  });

  it("groups IPv6 addresses by their /64 prefix", () => {
    const a = addressGroup("2001:db8:1:2:aaaa:bbbb:cccc:dddd");
    expect(a).toBe("2001:db8:1:2::/64");
    expect(addressGroup("2001:db8:1:2::1")).toBe(a);
    expect(addressGroup("2001:0db8:0001:0002:ffff:ffff:ffff:ffff")).toBe(a);
    expect(addressGroup("2001:db8:1:3::1")).not.toBe(a);
    expect(addressGroup("::1")).toBe("::/64");
    expect(addressGroup("fe80::1%eth0")).toBe("fe80::/64");
  });

  it("leaves what does not parse as its own group", () => {
    expect(addressGroup("")).toBe("");
    expect(addressGroup("not an address")).toBe("not an address");
  });
});
