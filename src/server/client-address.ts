/**
 * Which client a connection counts against for the per-address cap. An IPv4 client has one address; an
 * IPv6 client is usually given a whole /64 (one subnet, 2^64 addresses), so counting IPv6 addresses one by
 * one would let a single host open the cap's worth of connections from every address of its subnet. IPv6
 * addresses are therefore grouped by their /64 prefix; IPv4-mapped IPv6 addresses (`::ffff:a.b.c.d`, what a
 * dual-stack socket reports for IPv4 peers) stay per IPv4 address. Parsing is ipaddr.js's.
 */
import ipaddr from "ipaddr.js";

/**
 * The group of `address` (a socket's `remoteAddress`): the IPv4 address itself (`203.0.113.7`, mapped or
 * not), or the IPv6 /64 prefix (`2001:db8:1:2::/64`, zone ids dropped). Anything that does not parse is
 * its own group.
 */
export function addressGroup(address: string): string {
  const zone = address.indexOf("%");
  const bare = zone < 0 ? address : address.slice(0, zone);
  if (ipaddr.IPv4.isValidFourPartDecimal(bare)) return bare;
  if (!ipaddr.IPv6.isValid(bare)) return address;
  const v6 = ipaddr.IPv6.parse(bare);
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
  const prefix = new ipaddr.IPv6([...v6.parts.slice(0, 4), 0, 0, 0, 0]);
  return `${prefix.toString()}/64`;
}
