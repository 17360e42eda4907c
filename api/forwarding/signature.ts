// X-Parkbench-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body">
// under the parking's forwarding secret (issue 5). The receiver recomputes
// it over the raw body and compares in constant time; t lets it refuse old
// replays.
import { createHmac, timingSafeEqual } from 'node:crypto';

export function signatureHeader(secret: string, body: string, unixSeconds: number): string {
  const mac = createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex');
  return `t=${unixSeconds},v1=${mac}`;
}

/** The receiver's side (tests and the receiver in docs/operations.md, Forwarding do the same). */
export function verifySignature(secret: string, body: string, header: string, nowSeconds: number, toleranceSeconds = 300): boolean {
  const parts = Object.fromEntries(header.split(',').map((part) => part.split('=', 2) as [string, string]));
  const t = Number(parts.t);
  if (!Number.isInteger(t) || Math.abs(nowSeconds - t) > toleranceSeconds || typeof parts.v1 !== 'string') return false;
  const expected = Buffer.from(createHmac('sha256', secret).update(`${t}.${body}`).digest('hex'));
  const given = Buffer.from(parts.v1);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
