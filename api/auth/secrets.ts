// Passwords and issued secrets. Passwords (chosen by people, so guessable)
// and MQTT passwords are hashed with scrypt (node:crypto); the stored string
// carries its own parameters, `scrypt$<log2 N>$<r>$<p>$<salt b64url>$<hash
// b64url>`, so the cost can be raised later without invalidating older
// hashes. Client secrets are 256 random bits: a slow hash only protects
// low-entropy secrets, so they are stored as `sha256$<hash b64url>` and
// compared in constant time (older `scrypt$` client hashes still verify: the
// stored string names its algorithm). Tokens are 256 random bits kept only as
// SHA-256 hashes, and a bearer lookup costs one indexed read.
import * as crypto from 'node:crypto';
import { createHash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

const KEY_LENGTH = 32;
const SALT_LENGTH = 16;

export interface ScryptParameters {
  log2N: number;
  r: number;
  p: number;
}

function scryptAsync(secret: string, salt: Buffer, parameters: ScryptParameters): Promise<Buffer> {
  const N = 2 ** parameters.log2N;
  // maxmem must exceed 128 * N * r bytes or node refuses.
  const maxmem = 128 * N * parameters.r * 2;
  return new Promise((resolve, reject) => {
    scrypt(secret.normalize('NFC'), salt, KEY_LENGTH, { N, r: parameters.r, p: parameters.p, maxmem }, (error, key) => {
      if (error) reject(error);
      else resolve(key);
    });
  });
}

/** Hashes a password or secret with a fresh salt. Runs on libuv's pool. */
export async function hashSecret(secret: string, log2N: number): Promise<string> {
  const parameters = { log2N, r: 8, p: 1 };
  const salt = randomBytes(SALT_LENGTH);
  const key = await scryptAsync(secret, salt, parameters);
  return [
    'scrypt',
    parameters.log2N,
    parameters.r,
    parameters.p,
    salt.toString('base64url'),
    key.toString('base64url'),
  ].join('$');
}

/** Hashes a high-entropy issued secret (a client secret): `sha256$<hash>`. */
export function hashIssuedSecret(secret: string): string {
  return `sha256$${createHash('sha256').update(secret, 'utf8').digest('base64url')}`;
}

function verifySha256(secret: string, stored: string): boolean {
  const expected = Buffer.from(stored.slice('sha256$'.length), 'base64url');
  if (expected.length !== 32) return false;
  return timingSafeEqual(createHash('sha256').update(secret, 'utf8').digest(), expected);
}

/** Checks a secret against a stored hash (`sha256$` or `scrypt$`) in constant
 * time. A malformed stored hash never matches. */
export async function verifySecret(secret: string, stored: string): Promise<boolean> {
  if (stored.startsWith('sha256$')) return verifySha256(secret, stored);
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [log2N, r, p] = parts.slice(1, 4).map(Number);
  if (log2N === undefined || r === undefined || p === undefined || ![log2N, r, p].every(Number.isInteger)) return false;
  const salt = Buffer.from(parts[4] ?? '', 'base64url');
  const expected = Buffer.from(parts[5] ?? '', 'base64url');
  if (expected.length !== KEY_LENGTH) return false;
  const actual = await scryptAsync(secret, salt, { log2N, r, p });
  return timingSafeEqual(actual, expected);
}

let dummyHash: Promise<string> | undefined;

/** Spends the time of a real verification when there is nothing to verify
 * (unknown user or client), so response times do not reveal which exist. */
export async function verifyAgainstNothing(secret: string, log2N: number): Promise<false> {
  dummyHash ??= hashSecret('parkbench-dummy-secret', log2N);
  await verifySecret(secret, await dummyHash);
  return false;
}

const DUMMY_ISSUED_HASH = hashIssuedSecret('parkbench-dummy-client-secret');

/** Checks a client secret; an unknown client (no stored hash) costs the same
 * as a known one with a SHA-256 hash, so timing does not reveal which exist. */
export async function verifyClientSecret(secret: string, stored: string | undefined): Promise<boolean> {
  if (stored === undefined) {
    verifySha256(secret, DUMMY_ISSUED_HASH);
    return false;
  }
  return verifySecret(secret, stored);
}

/** A URL-safe random secret of `bytes` random bytes (base64url). */
export function randomSecret(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/** A 16-byte key as 32 hex digits (parking and box keys, docs/protocol.md, Keys). */
export function randomKeyHex(): string {
  return randomBytes(16).toString('hex');
}

/** An access or refresh token: 256 random bits, base64url (43 characters). */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

// crypto.hash (node >= 20.12) hashes in one call, without a Hash object: a
// third of createHash's cost, and this runs on every authenticated request.
type OneShotHash = (algorithm: string, data: string, encoding: 'base64url') => string;
const oneShotHash = (crypto as { hash?: OneShotHash }).hash;

/** A token's SHA-256 as base64url text: the bearer cache's key, the cheapest
 * form to compute (a string straight out of the hash, no Buffer). */
export function tokenHashText(token: string): string {
  return oneShotHash
    ? oneShotHash('sha256', token, 'base64url')
    : createHash('sha256').update(token).digest('base64url');
}

/** A token's SHA-256, as stored in the tokens table. */
export function tokenHash(token: string): Buffer {
  return Buffer.from(tokenHashText(token), 'base64url');
}
