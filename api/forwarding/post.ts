// One POST of a delivery, with node:http(s) rather than fetch: the socket's
// address lookup is ours (address-guard.ts checks the address actually
// connected to), a redirect is never followed, and the body is not read.
import { request as httpRequest, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { checkLiteralHost, publicOnlyLookup } from './address-guard.js';

export interface PostAnswer {
  status: number;
  headers: IncomingHttpHeaders;
}

export interface PostOptions {
  signal: AbortSignal;
  /** Refuse non-public addresses (FORWARDING_ALLOW_PRIVATE false). */
  publicOnly: boolean;
}

/** Resolves with the status and headers once they arrive (the body is
 * discarded); rejects on a refused address, a connection error or abort. */
export function postOnce(
  url: string,
  headers: OutgoingHttpHeaders,
  body: string,
  options: PostOptions,
): Promise<PostAnswer> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    if (options.publicOnly) {
      try {
        checkLiteralHost(target);
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
        return;
      }
    }
    const request = (target.protocol === 'https:' ? httpsRequest : httpRequest)(target, {
      method: 'POST',
      headers: { ...headers, 'content-length': Buffer.byteLength(body) },
      signal: options.signal,
      // A fresh connection per delivery: its address is looked up (and checked) each time.
      agent: false,
      ...(options.publicOnly ? { lookup: publicOnlyLookup } : {}),
    });
    request.on('response', (response) => {
      // The body is discarded; a connection cut while it drains changes nothing (the status is in).
      response.on('error', () => undefined);
      response.resume();
      resolve({ status: response.statusCode ?? 0, headers: response.headers });
    });
    request.on('error', reject);
    request.end(body);
  });
}
