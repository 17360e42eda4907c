// firmware-protocol's CCM (two cached AES contexts per key) must be byte for
// byte node's own aes-128-ccm with an 8-byte tag and a 12-byte nonce.
import { createCipheriv, createDecipheriv } from 'node:crypto';
import test from 'ava';
import fc from 'fast-check';
import { ccmOpen, ccmSeal, ccmTagOnly, ccmTagsOnly, ccmVerifyTagOnly } from '../../firmware-protocol/ccm.js';

function nodeSeal(key: Uint8Array, nonce: Uint8Array, aad: Uint8Array, plaintext: Uint8Array): Buffer {
  const cipher = createCipheriv('aes-128-ccm', key, nonce, { authTagLength: 8 });
  cipher.setAAD(aad, { plaintextLength: plaintext.length });
  return Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
}

function nodeOpen(key: Uint8Array, nonce: Uint8Array, aad: Uint8Array, sealed: Buffer): Buffer | null {
  const decipher = createDecipheriv('aes-128-ccm', key, nonce, { authTagLength: 8 });
  decipher.setAuthTag(sealed.subarray(sealed.length - 8));
  decipher.setAAD(aad, { plaintextLength: sealed.length - 8 });
  const plain = decipher.update(sealed.subarray(0, sealed.length - 8));
  try {
    decipher.final();
    return plain;
  } catch {
    return null;
  }
}

const bytes = (min: number, max: number): fc.Arbitrary<Buffer> =>
  fc.uint8Array({ minLength: min, maxLength: max }).map((a) => Buffer.from(a));

test('ccmSeal equals node aes-128-ccm on random keys, nonces, AAD and plaintexts (empty ones included)', (t) => {
  fc.assert(
    fc.property(bytes(16, 16), bytes(12, 12), bytes(0, 600), bytes(0, 600), (key, nonce, aad, plaintext) => {
      const mine = ccmSeal(key, nonce, aad, plaintext);
      const expected = nodeSeal(key, nonce, aad, plaintext);
      return Buffer.concat([mine.ciphertext, mine.tag]).equals(expected);
    }),
    { numRuns: 500 },
  );
  t.pass();
});

test('ccmOpen opens what node sealed and refuses a changed tag, ciphertext or AAD, like node', (t) => {
  fc.assert(
    fc.property(
      bytes(16, 16),
      bytes(12, 12),
      bytes(0, 64),
      bytes(0, 200),
      fc.nat(),
      (key, nonce, aad, plaintext, flip) => {
        const sealed = nodeSeal(key, nonce, aad, plaintext);
        const opened = ccmOpen(
          key,
          nonce,
          aad,
          sealed.subarray(0, sealed.length - 8),
          sealed.subarray(sealed.length - 8),
        );
        if (opened === null || !opened.equals(plaintext)) return false;
        const bad = Buffer.from(sealed);
        const bit = flip % (bad.length * 8);
        bad[bit >> 3] = (bad[bit >> 3] ?? 0) ^ (1 << (bit & 7));
        return (
          ccmOpen(key, nonce, aad, bad.subarray(0, bad.length - 8), bad.subarray(bad.length - 8)) === null &&
          nodeOpen(key, nonce, aad, bad) === null
        );
      },
    ),
    { numRuns: 500 },
  );
  t.pass();
});

test('interleaving keys does not disturb the cached contexts; a key buffer reused for another key is noticed', (t) => {
  const a = Buffer.alloc(16, 1);
  const b = Buffer.alloc(16, 2);
  const nonce = Buffer.alloc(12, 3);
  const aad = Buffer.alloc(36, 4);
  for (let i = 0; i < 5; i++) {
    t.deepEqual(ccmTagOnly(a, nonce, aad), nodeSeal(a, nonce, aad, Buffer.alloc(0)));
    t.deepEqual(ccmTagOnly(b, nonce, aad), nodeSeal(b, nonce, aad, Buffer.alloc(0)));
  }
  const reused = Buffer.from(a);
  ccmTagOnly(reused, nonce, aad);
  reused.fill(9);
  t.deepEqual(ccmTagOnly(reused, nonce, aad), nodeSeal(Buffer.alloc(16, 9), nonce, aad, Buffer.alloc(0)));
  t.true(ccmVerifyTagOnly(b, nonce, aad, nodeSeal(b, nonce, aad, Buffer.alloc(0))));
  t.false(ccmVerifyTagOnly(b, nonce, aad, Buffer.alloc(8)));
  t.false(ccmVerifyTagOnly(b, nonce, aad, Buffer.alloc(7)));
});

test("ccmTagsOnly gives ccmTagOnly's tag for each message of a batch (AAD of mixed lengths, empty ones included)", (t) => {
  const message = fc.record({ nonce: bytes(12, 12), aad: bytes(0, 100) });
  fc.assert(
    fc.property(bytes(16, 16), fc.array(message, { maxLength: 20 }), (key, messages) => {
      const tags = ccmTagsOnly(key, messages);
      return (
        tags.length === messages.length &&
        messages.every(({ nonce, aad }, i) => tags[i]?.equals(nodeSeal(key, nonce, aad, Buffer.alloc(0))))
      );
    }),
    { numRuns: 300 },
  );
  t.pass();
});

test('ccmTagsOnly refuses a wrong key or nonce length like ccmTagOnly', (t) => {
  t.throws(() => ccmTagsOnly(Buffer.alloc(15), []));
  t.throws(() => ccmTagsOnly(Buffer.alloc(16), [{ nonce: Buffer.alloc(11), aad: Buffer.alloc(0) }]));
});
