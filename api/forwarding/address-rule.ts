// The one rule of which addresses forwarding refuses when
// FORWARDING_ALLOW_PRIVATE is false: the note when an operator sets a URL and
// every delivery (address-guard.ts) ask it. An address is judged by what it
// reaches: an IPv6 address that carries an IPv4 address (IPv4-mapped,
// IPv4-compatible, IPv4-translated, NAT64, 6to4) is judged by that IPv4
// address, whatever way it is written (::ffff:127.0.0.1, ::ffff:7f00:1,
// 0:0:0:0:0:ffff:127.0.0.1); any other IPv6 address outside global unicast
// (2000::/3) is refused, and so are the special ranges inside it. The ranges
// are those of IANA's IPv4 and IPv6 special-purpose address registries
// (RFC 6890) that are not forwarded on the public Internet, membership is
// node's BlockList.
import { BlockList, isIP } from 'node:net';

type Range = readonly [network: string, prefix: number, kind: string];

const IPV4_RANGES: readonly Range[] = [
  ['0.0.0.0', 8, 'unspecified'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'private (shared address space)'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'reserved (IETF protocol assignments)'],
  ['192.0.2.0', 24, 'documentation'],
  ['192.88.99.0', 24, 'reserved (6to4 relay anycast)'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['198.51.100.0', 24, 'documentation'],
  ['203.0.113.0', 24, 'documentation'],
  ['224.0.0.0', 4, 'multicast'],
  // 255.255.255.255 (broadcast) included.
  ['240.0.0.0', 4, 'reserved'],
];

/** Judged before the embeddings: `::/96` (IPv4-compatible) holds them too. */
const IPV6_EXACT: readonly Range[] = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
];

/** IPv6 prefixes whose addresses carry an IPv4 address, and how an IPv4
 * network is written inside them (`at`: the bit the IPv4 address starts at). */
const EMBEDDINGS: readonly {
  name: string;
  network: string;
  prefix: number;
  at: number;
  embed: (ipv4: string) => string;
}[] = [
  { name: 'IPv4-mapped', network: '::ffff:0:0', prefix: 96, at: 96, embed: (ipv4) => `::ffff:${ipv4}` },
  { name: 'IPv4-translated', network: '::ffff:0:0:0', prefix: 96, at: 96, embed: (ipv4) => `::ffff:0:${ipv4}` },
  { name: 'IPv4-compatible', network: '::', prefix: 96, at: 96, embed: (ipv4) => `::${ipv4}` },
  { name: 'NAT64', network: '64:ff9b::', prefix: 96, at: 96, embed: (ipv4) => `64:ff9b::${ipv4}` },
  { name: '6to4', network: '2002::', prefix: 16, at: 16, embed: (ipv4) => `2002:${hextets(ipv4)}::` },
];

/** The IPv6 ranges judged as themselves, most specific first. */
const IPV6_RANGES: readonly Range[] = [
  ['64:ff9b:1::', 48, 'private (local-use NAT64)'],
  ['100::', 64, 'discard'],
  ['2001::', 32, 'Teredo tunnel'],
  ['2001:db8::', 32, 'documentation'],
  ['2001::', 23, 'reserved (IETF protocol assignments)'],
  ['3fff::', 20, 'documentation'],
  ['5f00::', 16, 'reserved (segment routing)'],
  ['fc00::', 7, 'private (unique local)'],
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'site-local'],
  ['ff00::', 8, 'multicast'],
];

const GLOBAL_UNICAST = blockList('2000::', 3, 'ipv6');

/** `a.b.c.d` as the two hextets of an IPv6 address. */
function hextets(ipv4: string): string {
  const [a = 0, b = 0, c = 0, d = 0] = ipv4.split('.').map(Number);
  return `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}

function blockList(network: string, prefix: number, type: 'ipv4' | 'ipv6'): BlockList {
  const list = new BlockList();
  list.addSubnet(network, prefix, type);
  return list;
}

interface Rule {
  list: BlockList;
  kind: string;
}

const rulesOf = (ranges: readonly Range[], type: 'ipv4' | 'ipv6'): Rule[] =>
  ranges.map(([network, prefix, kind]) => ({ list: blockList(network, prefix, type), kind }));

const IPV4_RULES = rulesOf(IPV4_RANGES, 'ipv4');
const IPV6_EXACT_RULES = rulesOf(IPV6_EXACT, 'ipv6');
const IPV6_RULES = rulesOf(IPV6_RANGES, 'ipv6');
const EMBEDDING_RULES = EMBEDDINGS.map((embedding) => ({
  list: blockList(embedding.network, embedding.prefix, 'ipv6'),
  rules: IPV4_RANGES.map(([network, prefix, kind]) => ({
    list: blockList(embedding.embed(network), embedding.at + prefix, 'ipv6'),
    kind: `${kind}, in ${embedding.name} IPv6`,
  })),
}));

const firstKind = (rules: readonly Rule[], ip: string, type: 'ipv4' | 'ipv6'): string | undefined =>
  rules.find((rule) => rule.list.check(ip, type))?.kind;

function ipv6Kind(ip: string): string | undefined {
  const exact = firstKind(IPV6_EXACT_RULES, ip, 'ipv6');
  if (exact !== undefined) return exact;
  const embedding = EMBEDDING_RULES.find((entry) => entry.list.check(ip, 'ipv6'));
  if (embedding !== undefined) return firstKind(embedding.rules, ip, 'ipv6');
  return (
    firstKind(IPV6_RULES, ip, 'ipv6') ??
    (GLOBAL_UNICAST.check(ip, 'ipv6') ? undefined : 'reserved (not global unicast)')
  );
}

/** What kind of non-public address `address` is (`loopback`, `private`,
 * `link-local`, ...; `loopback, in IPv4-mapped IPv6` for ::ffff:7f00:1), or
 * undefined for a public one or anything that is no IP address. Square
 * brackets around an IPv6 address (a URL's hostname) are allowed. */
export function nonPublicKind(address: string): string | undefined {
  const ip = address.replace(/^\[(.*)\]$/, '$1');
  switch (isIP(ip)) {
    case 4:
      return firstKind(IPV4_RULES, ip, 'ipv4');
    case 6:
      return ipv6Kind(ip);
    default:
      return undefined;
  }
}
