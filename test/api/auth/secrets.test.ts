import test from 'ava';
import fc from 'fast-check';
import {
  hashIssuedSecret,
  hashSecret,
  newToken,
  randomKeyHex,
  verifyClientSecret,
  verifySecret,
} from '../../../api/auth/secrets.js';
import { formatMinorUnits, parseMinorUnits } from '../../../api/parkings/money.js';

test('scrypt hashes carry their parameters and verify only the right secret', async (t) => {
  const hash = await hashSecret('pässword', 10);
  t.regex(hash, /^scrypt\$10\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
  t.true(await verifySecret('pässword', hash));
  t.true(await verifySecret('pa\u0308ssword', hash), 'unicode is normalized (NFC)');
  t.false(await verifySecret('password', hash));
  t.not(await hashSecret('pässword', 10), hash, 'salted');
  // A hash made with other parameters still verifies: they are read from it.
  t.true(await verifySecret('x', await hashSecret('x', 11)));
  for (const broken of ['', 'scrypt$10$8$1$salt', 'bcrypt$10$8$1$a$b', 'scrypt$x$8$1$AAAA$AAAA'])
    t.false(await verifySecret('x', broken));
});

test('tokens are 256 random bits, URL-safe; keys 16 bytes hex', (t) => {
  const token = newToken();
  t.regex(token, /^[A-Za-z0-9_-]{43}$/);
  t.is(Buffer.from(token, 'base64url').length, 32);
  t.not(newToken(), token);
  t.regex(randomKeyHex(), /^[0-9a-f]{32}$/);
});

test('prices: at most 2 decimals, in integer minor units, round trip', (t) => {
  t.is(parseMinorUnits('2.50'), 250);
  t.is(parseMinorUnits('2.5'), 250);
  t.is(parseMinorUnits('0.07'), 7);
  t.is(parseMinorUnits('3'), 300);
  for (const bad of ['2.505', '-1', '1e3', '', '.5', '2.', 'abc']) t.is(parseMinorUnits(bad), undefined, bad);
  fc.assert(fc.property(fc.nat(1_000_000_000), (minor) => parseMinorUnits(formatMinorUnits(minor)) === minor));
});

test('client secrets: SHA-256 hashes naming their algorithm; older scrypt client hashes still verify', async (t) => {
  const secret = 'x'.repeat(43);
  const hash = hashIssuedSecret(secret);
  t.regex(hash, /^sha256\$[A-Za-z0-9_-]{43}$/);
  t.true(await verifySecret(secret, hash));
  t.false(await verifySecret(`${secret}y`, hash));
  t.false(await verifySecret(secret, 'sha256$short'));
  t.true(await verifyClientSecret(secret, hash));
  t.true(
    await verifyClientSecret(secret, await hashSecret(secret, 10)),
    'a client whose secret is stored as an scrypt hash still logs in',
  );
  t.false(await verifyClientSecret(secret, undefined), 'unknown client');
});
