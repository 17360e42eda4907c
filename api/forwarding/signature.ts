// Standard Webhooks 1.0 signatures: a receiver verifies a
// delivery with the library it already uses (e.g. the `standardwebhooks` npm
// package). The signed content is "webhook-id.webhook-timestamp.body"; the
// header `webhook-signature` is `v1,<base64 HMAC-SHA256>`, one per live
// secret, separated by spaces (a rotation's overlap signs with both).
import { createHmac, randomBytes } from 'node:crypto';

/** Standard Webhooks' symmetric secret prefix. */
export const SECRET_PREFIX = 'whsec_';
/** Key bytes of a new secret (the specification allows 24 to 64). */
export const SECRET_BYTES = 32;

/** `whsec_` + base64 of fresh random bytes. */
export function newWebhookSecret(bytes = SECRET_BYTES): string {
  return `${SECRET_PREFIX}${randomBytes(bytes).toString('base64')}`;
}

/**
 * The HMAC key of a stored secret: the base64 after `whsec_`. A secret made
 * before Standard Webhooks (migration 10: no prefix, a base64url string) keeps
 * signing with the bytes it signed with before, its own characters; a
 * receiver holding it verifies with `new Webhook(old, { format: 'raw' })` or,
 * the same key, `whsec_` + base64 of those characters.
 */
export function secretKey(secret: string): Buffer {
  return secret.startsWith(SECRET_PREFIX)
    ? Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64')
    : Buffer.from(secret, 'utf8');
}

/** The `webhook-signature` value: `v1,<base64>` per secret, space-separated. */
export function webhookSignature(
  secrets: readonly string[],
  id: string,
  timestampSeconds: number,
  body: string,
): string {
  return secrets
    .map(
      (secret) =>
        `v1,${createHmac('sha256', secretKey(secret)).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`,
    )
    .join(' ');
}
