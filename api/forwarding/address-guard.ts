// Forwarding must not be a server-side request forgery vector (issue 16): a
// URL whose host resolves to a private, loopback or link-local address is
// refused unless FORWARDING_ALLOW_PRIVATE. The check is made at delivery
// time on the very address the socket connects to (a lookup hook on the
// request), so a name re-pointed after the URL was set, or resolving
// differently each time, cannot slip through.
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOneOptions } from 'node:dns';
import { lookup as lookupAll } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

const RANGES: readonly (readonly [string, number, 'ipv4' | 'ipv6', string])[] = [
  ['0.0.0.0', 8, 'ipv4', 'unspecified'],
  ['10.0.0.0', 8, 'ipv4', 'private'],
  ['100.64.0.0', 10, 'ipv4', 'private (shared address space)'],
  ['127.0.0.0', 8, 'ipv4', 'loopback'],
  ['169.254.0.0', 16, 'ipv4', 'link-local'],
  ['172.16.0.0', 12, 'ipv4', 'private'],
  ['192.168.0.0', 16, 'ipv4', 'private'],
  ['224.0.0.0', 4, 'ipv4', 'multicast'],
  ['240.0.0.0', 4, 'ipv4', 'reserved'],
  ['::', 128, 'ipv6', 'unspecified'],
  ['::1', 128, 'ipv6', 'loopback'],
  ['fc00::', 7, 'ipv6', 'private (unique local)'],
  ['fe80::', 10, 'ipv6', 'link-local'],
  ['ff00::', 8, 'ipv6', 'multicast'],
];

const LISTS = RANGES.map(([network, prefix, type, kind]) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, type);
  return { list, type, kind };
});

/** What kind of non-public address `address` is (`loopback`, `private`,
 * `link-local`, ...), or undefined for a public one. An IPv4-mapped IPv6
 * address (::ffff:127.0.0.1) is judged as its IPv4 address. */
export function nonPublicKind(address: string): string | undefined {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  const ip = mapped?.[1] ?? address.replace(/^\[|\]$/g, '');
  const family = isIP(ip);
  if (family === 0) return undefined;
  const type = family === 4 ? 'ipv4' : 'ipv6';
  return LISTS.find((entry) => entry.type === type && entry.list.check(ip, type))?.kind;
}

/** The refusal, as the delivery's last error. */
export class PrivateAddressError extends Error {
  override readonly name = 'PrivateAddressError';
  constructor(host: string, address: string, kind: string) {
    super(
      `refused: ${host === address ? address : `${host} resolves to ${address}`} (${kind}); FORWARDING_ALLOW_PRIVATE is false`,
    );
  }
}

/** Throws PrivateAddressError when the URL's host is an IP literal that is
 * not public (the socket does no lookup for those). */
export function checkLiteralHost(url: URL): void {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const kind = isIP(host) === 0 ? undefined : nonPublicKind(host);
  if (kind !== undefined) throw new PrivateAddressError(host, host, kind);
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `lookup` for http.request / net.connect that refuses non-public
 * addresses: every address of the answer must be public. */
export function publicOnlyLookup(
  hostname: string,
  options: LookupOneOptions | LookupAllOptions,
  callback: LookupCallback,
): void {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) {
      callback(error, '');
      return;
    }
    for (const { address } of addresses) {
      const kind = nonPublicKind(address);
      if (kind !== undefined) {
        callback(Object.assign(new PrivateAddressError(hostname, address, kind), { code: 'EPRIVATEADDRESS' }), '');
        return;
      }
    }
    if (options.all === true) callback(null, addresses);
    else {
      const [first] = addresses;
      if (first === undefined)
        callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '');
      else callback(null, first.address, first.family);
    }
  });
}

/** A slow resolver does not hold the admin command longer than this, ms. */
const SET_TIME_LOOKUP_MS = 2_000;

function withinMs<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('lookup timed out')), ms);
    timer.unref();
    promise.then(resolve, reject).finally(() => clearTimeout(timer));
  });
}

/** When a URL is set (the admin CLI warns): the first non-public address its
 * host is or resolves to, or undefined (public, or no answer now: the
 * delivery will tell). Delivery checks again whatever this said. */
export async function nonPublicAddressOf(
  url: string,
): Promise<{ host: string; address: string; kind: string } | undefined> {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  try {
    addresses =
      isIP(host) === 0
        ? (await withinMs(lookupAll(host, { all: true }), SET_TIME_LOOKUP_MS)).map((entry) => entry.address)
        : [host];
  } catch {
    return undefined;
  }
  for (const address of addresses) {
    const kind = nonPublicKind(address);
    if (kind !== undefined) return { host, address, kind };
  }
  return undefined;
}
