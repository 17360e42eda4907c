// The curve P-256 (NIST FIPS 186-4, D.1.2.3; SEC 2 secp256r1) as BigInt
// arithmetic, for the two things node:crypto does not offer here:
// - docs/protocol.md, step 5: SET_ISSUER's keys must be "a point on
//   P-256": coordinates below p and y² = x³ − 3x + b (mod p), checked
//   explicitly rather than trusting what a key import happens to refuse;
// - the test vectors' deterministic signatures (rfc6979.ts).
// Not constant time: never use the scalar multiplication with a service key.

export const P256 = {
  p: 0xffffffff00000001000000000000000000000000ffffffffffffffffffffffffn,
  n: 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n,
  b: 0x5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604bn,
  gx: 0x6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296n,
  gy: 0x4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5n,
} as const;

const { p } = P256;

export function mod(a: bigint, m: bigint): bigint {
  const r = a % m;
  return r < 0n ? r + m : r;
}

/** a^e mod m, square and multiply. */
export function powMod(a: bigint, e: bigint, m: bigint): bigint {
  let result = 1n;
  let base = mod(a, m);
  let exp = e;
  while (exp > 0n) {
    if ((exp & 1n) === 1n) result = (result * base) % m;
    base = (base * base) % m;
    exp >>= 1n;
  }
  return result;
}

/** The inverse modulo a prime m (Fermat). */
export function invMod(a: bigint, m: bigint): bigint {
  return powMod(a, m - 2n, m);
}

export function bytesToBigInt(bytes: Uint8Array): bigint {
  return bytes.length === 0
    ? 0n
    : BigInt(`0x${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex')}`);
}

export function bigIntToBytes(value: bigint, length: number): Buffer {
  return Buffer.from(value.toString(16).padStart(length * 2, '0'), 'hex');
}

/** True when 0 <= x, y < p and y² = x³ − 3x + b (mod p). The point at
 * infinity has no X || Y form, so it is never "on the curve" here. */
export function isOnCurve(x: bigint, y: bigint): boolean {
  if (x < 0n || y < 0n || x >= p || y >= p) return false;
  return mod(y * y - (x * x * x - 3n * x + P256.b), p) === 0n;
}

/** docs/protocol.md, Keys: a 64-byte X || Y that is a point on P-256. */
export function isP256Point(publicKey: Uint8Array): boolean {
  if (publicKey.length !== 64) return false;
  return isOnCurve(bytesToBigInt(publicKey.subarray(0, 32)), bytesToBigInt(publicKey.subarray(32)));
}

type Affine = { x: bigint; y: bigint } | null; // null: the point at infinity

function add(a: Affine, b: Affine): Affine {
  if (a === null) return b;
  if (b === null) return a;
  if (a.x === b.x) {
    if (mod(a.y + b.y, p) === 0n) return null;
    const l = mod(3n * a.x * a.x - 3n, p) * invMod(mod(2n * a.y, p), p);
    return finish(a, a.x, mod(l, p));
  }
  const l = mod(b.y - a.y, p) * invMod(mod(b.x - a.x, p), p);
  return finish(a, b.x, mod(l, p));
}

function finish(a: { x: bigint; y: bigint }, otherX: bigint, l: bigint): Affine {
  const x = mod(l * l - a.x - otherX, p);
  return { x, y: mod(l * (a.x - x) - a.y, p) };
}

/** k × G, double and add (affine: slow, fine for a few test vectors). */
export function multiplyGenerator(k: bigint): Affine {
  let result: Affine = null;
  let addend: Affine = { x: P256.gx, y: P256.gy };
  let scalar = k;
  while (scalar > 0n) {
    if ((scalar & 1n) === 1n) result = add(result, addend);
    addend = add(addend, addend);
    scalar >>= 1n;
  }
  return result;
}
