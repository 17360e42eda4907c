// Issuer key pairs (docs/protocol.md, Keys): ECDSA P-256. A public key travels as
// 64 bytes X || Y (the uncompressed point without its 0x04 prefix); a private
// key is a node KeyObject or its 32-byte scalar d. node:crypto wants
// KeyObjects, and making one costs more than a verification: they are cached
// per key, by object and by bytes (bounded), like the AES contexts of ccm.ts.
import { type KeyObject, createHash, createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { ISSUER_PRIVATE_KEY_LENGTH, ISSUER_PUBLIC_KEY_LENGTH } from './constants.js';
import { ProtocolError, ProtocolErrorCode } from './errors.js';
import { P256, bytesToBigInt, isP256Point } from './p256.js';

/** A private issuer key: a P-256 KeyObject, or its scalar d as 32 bytes. */
export type IssuerPrivateKey = KeyObject | Uint8Array;

/** SubjectPublicKeyInfo of an uncompressed P-256 point, before its 0x04 || X || Y. */
const SPKI_PREFIX = Buffer.from('3059301306072a8648ce3d020106082a8648ce3d030107034200', 'hex');
/** SEC 1 ECPrivateKey with the P-256 OID and no public key (OpenSSL derives it): prefix, d, suffix. */
const SEC1_PREFIX = Buffer.from('30310201010420', 'hex');
const SEC1_SUFFIX = Buffer.from('a00a06082a8648ce3d030107', 'hex');
const MAX_CACHED_KEYS = 1024;

class KeyCache {
  readonly #byObject = new WeakMap<Uint8Array, { bytes: Buffer; key: KeyObject }>();
  readonly #byBytes = new Map<string, { bytes: Buffer; key: KeyObject }>();

  get(raw: Uint8Array, make: (raw: Uint8Array) => KeyObject): KeyObject {
    const cached = this.#byObject.get(raw);
    // The bytes are compared too, in case the caller reused the buffer for another key.
    if (cached !== undefined && cached.bytes.equals(raw)) return cached.key;
    const id = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('latin1');
    let entry = this.#byBytes.get(id);
    if (entry === undefined) {
      entry = { bytes: Buffer.from(raw), key: make(raw) };
      if (this.#byBytes.size >= MAX_CACHED_KEYS) {
        const oldest = this.#byBytes.keys().next();
        if (oldest.done !== true) this.#byBytes.delete(oldest.value);
      }
      this.#byBytes.set(id, entry);
    }
    this.#byObject.set(raw, entry);
    return entry.key;
  }
}

const publicKeys = new KeyCache();
const privateKeys = new KeyCache();

/** True for 64 bytes X || Y of a point on P-256 (docs/protocol.md, step 5). */
export function isIssuerPublicKey(publicKey: Uint8Array): boolean {
  return publicKey instanceof Uint8Array && isP256Point(publicKey);
}

/** The KeyObject of a 64-byte public key; throws ProtocolError(BAD_INPUT) for bytes that are no point on P-256. */
export function issuerPublicKeyObject(publicKey: Uint8Array): KeyObject {
  return publicKeys.get(publicKey, (raw) => {
    if (!isIssuerPublicKey(raw))
      throw new ProtocolError(
        ProtocolErrorCode.BAD_INPUT,
        'an issuer public key must be 64 bytes X || Y of a point on P-256',
      );
    return createPublicKey({ key: Buffer.concat([SPKI_PREFIX, Buffer.of(0x04), raw]), format: 'der', type: 'spki' });
  });
}

function isP256PrivateKeyObject(key: KeyObject): boolean {
  return (
    key.type === 'private' && key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1'
  );
}

/** The KeyObject of a private issuer key; throws ProtocolError(BAD_INPUT) for
 * anything but a P-256 private key or a scalar 1..n−1 of 32 bytes. */
export function issuerPrivateKeyObject(privateKey: IssuerPrivateKey): KeyObject {
  if (!(privateKey instanceof Uint8Array)) {
    if (!isP256PrivateKeyObject(privateKey))
      throw new ProtocolError(ProtocolErrorCode.BAD_INPUT, 'an issuer private key must be an EC P-256 private key');
    return privateKey;
  }
  return privateKeys.get(privateKey, (raw) => {
    const d = raw.length === ISSUER_PRIVATE_KEY_LENGTH ? bytesToBigInt(raw) : 0n;
    if (d <= 0n || d >= P256.n)
      throw new ProtocolError(
        ProtocolErrorCode.BAD_INPUT,
        'an issuer private key must be 32 bytes, a scalar 1..n−1 of P-256',
      );
    return createPrivateKey({ key: Buffer.concat([SEC1_PREFIX, raw, SEC1_SUFFIX]), format: 'der', type: 'sec1' });
  });
}

const fromBase64Url = (text: string | undefined, length: number): Buffer => {
  const bytes = Buffer.from(text ?? '', 'base64url');
  return Buffer.concat([Buffer.alloc(Math.max(0, length - bytes.length)), bytes]);
};

/** The 64-byte public key (X || Y) of a private issuer key. */
export function issuerPublicKeyOf(privateKey: IssuerPrivateKey): Buffer {
  const jwk = createPublicKey(issuerPrivateKeyObject(privateKey)).export({ format: 'jwk' });
  return Buffer.concat([fromBase64Url(jwk.x, 32), fromBase64Url(jwk.y, 32)]);
}

/** A new issuer key pair from the CSPRNG (docs/protocol.md, Keys): the private
 * scalar (32 bytes) and the public key (64 bytes, X || Y). */
export function generateIssuerKeyPair(): { privateKey: Buffer; publicKey: Buffer } {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = privateKey.export({ format: 'jwk' });
  return {
    privateKey: fromBase64Url(jwk.d, ISSUER_PRIVATE_KEY_LENGTH),
    publicKey: Buffer.concat([fromBase64Url(jwk.x, 32), fromBase64Url(jwk.y, 32)]),
  };
}

/** A short name for a public key in logs and renderings: `sha256:` and the
 * first 8 hex digits of SHA-256(X || Y). Not the key itself. */
export function issuerKeyFingerprint(publicKey: Uint8Array): string {
  if (publicKey.length !== ISSUER_PUBLIC_KEY_LENGTH) return 'invalid';
  return `sha256:${createHash('sha256').update(publicKey).digest('hex').slice(0, 8)}`;
}
