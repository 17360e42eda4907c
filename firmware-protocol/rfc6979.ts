// Deterministic ECDSA P-256 with SHA-256 (RFC 6979, 3.2), for the test
// vectors only. Why: docs/protocol.md, Test vectors, lets a signed vector hold
// any one valid signature, and `parkbench protocol vectors --check` compares
// the file byte for byte with what the generator makes; node:crypto signs
// with a random k only. The service and every box use node's crypto.sign
// and crypto.verify (signed-command.ts). Not constant time: test keys only.
import { createHash, createHmac } from 'node:crypto';
import { P256, bigIntToBytes, bytesToBigInt, invMod, mod, multiplyGenerator } from './p256.js';

const { n } = P256;
const hmac = (key: Buffer, ...parts: Uint8Array[]): Buffer => {
  const h = createHmac('sha256', key);
  for (const part of parts) h.update(part);
  return h.digest();
};

/** r || s (32 bytes each) of `message` under the scalar `privateKey` (32 bytes). */
export function signDeterministic(privateKey: Uint8Array, message: Uint8Array): Buffer {
  const x = bytesToBigInt(privateKey);
  if (x <= 0n || x >= n) throw new RangeError('private key out of range');
  const h = bytesToBigInt(createHash('sha256').update(message).digest()); // qlen = hlen = 256: bits2int is the integer
  const xOctets = bigIntToBytes(x, 32);
  const hOctets = bigIntToBytes(mod(h, n), 32); // bits2octets
  let v: Buffer = Buffer.alloc(32, 0x01);
  let k: Buffer = Buffer.alloc(32, 0x00);
  k = hmac(k, v, Buffer.of(0x00), xOctets, hOctets);
  v = hmac(k, v);
  k = hmac(k, v, Buffer.of(0x01), xOctets, hOctets);
  v = hmac(k, v);
  for (;;) {
    v = hmac(k, v);
    const candidate = bytesToBigInt(v);
    if (candidate >= 1n && candidate < n) {
      const point = multiplyGenerator(candidate);
      const r = point === null ? 0n : mod(point.x, n);
      const s = mod(invMod(candidate, n) * (h + r * x), n);
      if (r !== 0n && s !== 0n) return Buffer.concat([bigIntToBytes(r, 32), bigIntToBytes(s, 32)]);
    }
    k = hmac(k, v, Buffer.of(0x00));
    v = hmac(k, v);
  }
}
