// Forwarding must not be a server-side request forgery vector: a URL whose
// host is or resolves to an address that is not public (address-rule.ts) is
// refused unless FORWARDING_ALLOW_PRIVATE. The check is made at delivery
// time on the very address the socket connects to (a lookup hook on the
// request), so a name re-pointed after the URL was set, or resolving
// differently each time, cannot slip through.
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOneOptions } from 'node:dns';
import { lookup as lookupAll } from 'node:dns/promises';
import { isIP } from 'node:net';
import { nonPublicKind } from './address-rule.js';

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
