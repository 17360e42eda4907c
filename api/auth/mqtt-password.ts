// MQTT passwords are stored in mosquitto's own format, `$7$<iterations>$<salt
// b64>$<PBKDF2-HMAC-SHA512 b64>` (what mosquitto_passwd 2.x writes), so the
// embedded broker checks them and `parkbench admin mqtt-acl` can hand the very
// same hashes to an external mosquitto: no password is ever kept in clear.
// The passwords are random secrets the service issues (24 bytes), so a fast
// hash suffices and 5,000 boxes connecting at once cost milliseconds, not
// minutes of scrypt.
import { pbkdf2Sync, randomBytes, timingSafeEqual } from 'node:crypto';
import { verifySecret } from './secrets.js';

/** mosquitto_passwd's defaults. */
const ITERATIONS = 101;
const SALT_BYTES = 12;
const HASH_BYTES = 64;

export function hashMqttPassword(password: string): string {
  const salt = randomBytes(SALT_BYTES);
  const hash = pbkdf2Sync(password, salt, ITERATIONS, HASH_BYTES, 'sha512');
  return `$7$${ITERATIONS}$${salt.toString('base64')}$${hash.toString('base64')}`;
}

/** Checks a password against a stored hash in constant time; hashes stored
 * before this format (scrypt) still verify. */
export async function verifyMqttPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts[0] !== '' || parts[1] !== '7') return verifySecret(password, stored);
  const iterations = Number(parts[2]);
  const salt = Buffer.from(parts[3] ?? '', 'base64');
  const expected = Buffer.from(parts[4] ?? '', 'base64');
  if (!Number.isInteger(iterations) || iterations < 1 || iterations > 1_000_000 || expected.length !== HASH_BYTES)
    return false;
  return timingSafeEqual(pbkdf2Sync(password, salt, iterations, HASH_BYTES, 'sha512'), expected);
}

/** True for a hash mosquitto can read as it is. */
export function isMosquittoHash(stored: string): boolean {
  return /^\$7\$\d+\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/.test(stored);
}
