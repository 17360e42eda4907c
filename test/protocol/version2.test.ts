// Protocol version 2 (docs/protocol.md): ACCESS_SIGNED, REVOKE, SET_ISSUER, and
// decide()'s new steps 2, 4, 5, 6 and 8a, each also showing what comes first.
import { createPrivateKey, generateKeyPairSync, sign, verify } from 'node:crypto';
import test from 'ava';
import {
  Direction,
  FrameKind,
  ProtocolError,
  Status,
  decide,
  generateIssuerKeyPair,
  initialBoxState,
  isIssuerPublicKey,
  issuerPublicKeyObject,
  issuerPublicKeyOf,
  openCommand,
  openSignedCommand,
  parseCommandHeader,
  sealCommand,
  sealRawCommand,
  signAccessCommand,
  signRawCommand,
  statusName,
  verifyResponse,
  verifySignature,
} from '../../firmware-protocol/index.js';
import {
  HOUR,
  T0,
  access,
  body,
  boxKey,
  conditions,
  config,
  flipBit,
  issuerPrivate,
  issuerPublic,
  otherIssuerPrivate,
  otherIssuerPublic,
  parkingKey,
  revoke,
  setIssuer,
  signedAccess,
  state,
} from '../helpers/protocol-fixtures.js';

const name = (status: number): string => statusName(status) ?? String(status);
const zeros = Buffer.alloc(64);

test('signAccessCommand: header, the ACCESS body in the clear, then r || s over bytes 0..21+n that node verifies', (t) => {
  const frame = signedAccess();
  t.is(frame.length, 22 + 19 + 64);
  t.is(frame[0], 1);
  t.is(frame[1], FrameKind.ACCESS_SIGNED);
  t.is(frame.readUInt32BE(2), 42);
  t.is(frame.readUInt32BE(6), 7);
  const sealed = sealCommand({ key: parkingKey, kind: FrameKind.ACCESS, keyId: 42, scope: 7, body });
  const opened = openCommand(sealed, parkingKey);
  if (!opened.ok) return t.fail();
  // The clear body is byte for byte the ACCESS plaintext.
  t.deepEqual(frame.subarray(22, 41), Buffer.from('6955b9006955d52002010200000065' + '00000066', 'hex'));
  t.true(
    verify(
      'sha256',
      frame.subarray(0, -64),
      { key: issuerPublicKeyObject(issuerPublic), dsaEncoding: 'ieee-p1363' },
      frame.subarray(-64),
    ),
  );
  // A KeyObject works as the private key too, and random nonces differ.
  const keyObject = createPrivateKey({
    key: Buffer.concat([
      Buffer.from('30310201010420', 'hex'),
      issuerPrivate,
      Buffer.from('a00a06082a8648ce3d030107', 'hex'),
    ]),
    format: 'der',
    type: 'sec1',
  });
  const again = signAccessCommand({ privateKey: keyObject, keyId: 42, scope: 7, body });
  t.is(verifySignature(again, [issuerPublic]), 0);
  t.notDeepEqual(again.subarray(10, 22), frame.subarray(10, 22));
});

test('openSignedCommand: steps 1, 2, 4, 5; tries issuer_key then issuer_key_previous; other kinds and sealed frames fail', (t) => {
  const frame = signedAccess();
  const opened = openSignedCommand(frame, [otherIssuerPublic, issuerPublic]);
  if (!opened.ok) return t.fail();
  t.is(opened.keyIndex, 1);
  t.like(opened.command, { kind: FrameKind.ACCESS_SIGNED, keyId: 42, scope: 7 });
  t.deepEqual(opened.command.body, body);
  t.like(openSignedCommand(frame, otherIssuerPublic), { ok: false, status: Status.AUTH_FAILED });
  t.like(openSignedCommand(frame, [null, null]), { ok: false, status: Status.AUTH_FAILED });
  t.like(openSignedCommand(access(), issuerPublic), { ok: false, status: Status.AUTH_FAILED });
  t.like(openCommand(frame, parkingKey), { ok: false, status: Status.AUTH_FAILED }, 'no AES key verifies a signature');
  t.like(openSignedCommand(frame.subarray(0, 85), issuerPublic), { ok: false, status: Status.MALFORMED, header: null });
  const badBody = signRawCommand({
    privateKey: issuerPrivate,
    keyId: 1,
    scope: 7,
    body: Buffer.from('6955b9006955d520010100', 'hex'),
  });
  t.like(openSignedCommand(badBody, issuerPublic), { ok: false, status: Status.MALFORMED });
  t.like(
    openSignedCommand(frame, Buffer.alloc(64, 1)),
    { ok: false, status: Status.AUTH_FAILED },
    'a key that is no point never verifies, and nothing throws',
  );
});

test('issuer keys: generate, derive the public key, check points; bad private keys are typed errors', (t) => {
  const pair = generateIssuerKeyPair();
  t.is(pair.privateKey.length, 32);
  t.is(pair.publicKey.length, 64);
  t.deepEqual(issuerPublicKeyOf(pair.privateKey), pair.publicKey);
  t.true(isIssuerPublicKey(pair.publicKey));
  t.false(isIssuerPublicKey(flipBit(pair.publicKey, 511)));
  t.false(isIssuerPublicKey(zeros));
  t.is(
    verifySignature(signAccessCommand({ privateKey: pair.privateKey, keyId: 1, scope: 7, body }), [pair.publicKey]),
    0,
  );
  const n = Buffer.from('ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551', 'hex');
  for (const bad of [Buffer.alloc(32), n, Buffer.alloc(31, 1)])
    t.throws(() => signAccessCommand({ privateKey: bad, keyId: 1, scope: 7, body }), { instanceOf: ProtocolError });
  const ed = generateKeyPairSync('ed25519').privateKey;
  t.throws(() => signAccessCommand({ privateKey: ed, keyId: 1, scope: 7, body }), { instanceOf: ProtocolError });
  t.throws(
    () => setIssuer(6, flipBit(issuerPublic, 511), null),
    { instanceOf: ProtocolError },
    'the encoder refuses a point off the curve',
  );
  t.throws(
    () =>
      sealCommand({
        key: parkingKey,
        kind: FrameKind.ACCESS_SIGNED as typeof FrameKind.ACCESS,
        keyId: 1,
        scope: 7,
        body,
      }),
    { instanceOf: ProtocolError, message: /signAccessCommand/ },
    'ACCESS_SIGNED is signed, never sealed',
  );
  t.throws(() => revoke(6, []), { instanceOf: ProtocolError });
  t.throws(
    () =>
      revoke(
        6,
        Array.from({ length: 17 }, () => ({ keyId: 1, until: 1 })),
      ),
    { instanceOf: ProtocolError },
  );
});

test('step 2: ACCESS_SIGNED needs 86 bytes (header and signature), else MALFORMED with kind and key_id 0', (t) => {
  const frame = signedAccess();
  const d = decide(config, state, conditions, frame.subarray(0, 85));
  t.is(name(d.status), 'MALFORMED');
  t.is(d.kind, 0);
  t.is(d.keyId, 0);
  t.true(parseCommandHeader(frame.subarray(0, 86)).ok);
  const cut = decide(config, state, conditions, frame.subarray(0, 86));
  t.is(name(cut.status), 'AUTH_FAILED', 'a longer frame cut short fails at step 4');
  t.is(cut.kind, FrameKind.ACCESS_SIGNED);
  t.is(
    name(decide(config, state, conditions, revoke(6, [{ keyId: 1, until: T0 }]).subarray(0, 29)).status),
    'MALFORMED',
  );
});

test('step 3: ACCESS_SIGNED for another parking is WRONG_PARKING before any signature check; REVOKE / SET_ISSUER for another module WRONG_MODULE', (t) => {
  const d = decide(config, state, conditions, signedAccess({ scope: 8, privateKey: otherIssuerPrivate }));
  t.is(name(d.status), 'WRONG_PARKING');
  t.is(d.fields.direction, Direction.ENTRANCE);
  const r = decide(config, state, conditions, revoke(6, [{ keyId: 1, until: T0 }], { scope: 102 }));
  t.is(name(r.status), 'WRONG_MODULE');
  t.is(r.fields.direction, Direction.CONTROL);
  t.is(
    name(decide(config, state, conditions, setIssuer(6, otherIssuerPublic, null, { scope: 100 })).status),
    'WRONG_MODULE',
  );
});

test('step 4: ACCESS_SIGNED verifies under issuer_key or issuer_key_previous, else AUTH_FAILED (no key: all refused); ACCESS needs K_park', (t) => {
  const frame = signedAccess();
  t.is(name(decide(config, state, conditions, frame).status), 'OK');
  t.is(
    name(
      decide(config, { ...state, issuerKey: otherIssuerPublic, issuerKeyPrevious: issuerPublic }, conditions, frame)
        .status,
    ),
    'OK',
  );
  t.is(
    name(decide(config, { ...state, issuerKey: otherIssuerPublic, issuerKeyPrevious: null }, conditions, frame).status),
    'AUTH_FAILED',
  );
  const none = decide(config, { ...state, issuerKey: null, issuerKeyPrevious: null }, conditions, frame);
  t.is(name(none.status), 'AUTH_FAILED');
  t.is(none.remaining, 0xff);
  t.is(none.command, null);
  for (const offset of [1, 5, 9, 15, 22, 40, 41, 72, 104]) {
    const flipped = Buffer.from(frame);
    flipped[offset] = (flipped[offset] ?? 0) ^ 0x80;
    t.not(decide(config, state, conditions, flipped).status, Status.OK, `byte ${offset}`);
  }
  const noParkingKey = { ...config, parkingKey: null, parkingKeyNext: null };
  t.is(name(decide(noParkingKey, state, conditions, access()).status), 'AUTH_FAILED');
  t.is(name(decide(noParkingKey, state, conditions, frame).status), 'OK', 'a signed parking box holds no K_park');
  t.is(
    name(decide(config, state, conditions, revoke(6, [{ keyId: 1, until: T0 }], { key: parkingKey })).status),
    'AUTH_FAILED',
  );
});

test('step 5: bodies of REVOKE (count 1..16, 1 + 8 × count) and SET_ISSUER (128 bytes of points, only the previous may be zero) after the tag', (t) => {
  const control = (kind: number, plaintext: Buffer): string =>
    name(
      decide(config, state, conditions, sealRawCommand({ key: boxKey, kind, keyId: 6, scope: 101, plaintext })).status,
    );
  t.is(control(FrameKind.REVOKE, Buffer.from([0])), 'MALFORMED');
  t.is(control(FrameKind.REVOKE, Buffer.concat([Buffer.from([17]), Buffer.alloc(17 * 8)])), 'MALFORMED');
  t.is(control(FrameKind.REVOKE, Buffer.concat([Buffer.from([16]), Buffer.alloc(16 * 8)])), 'OK');
  t.is(control(FrameKind.REVOKE, Buffer.concat([Buffer.from([1]), Buffer.alloc(9)])), 'MALFORMED');
  t.is(control(FrameKind.SET_ISSUER, Buffer.concat([otherIssuerPublic, zeros])), 'OK');
  t.is(control(FrameKind.SET_ISSUER, Buffer.concat([zeros, otherIssuerPublic])), 'MALFORMED');
  t.is(control(FrameKind.SET_ISSUER, Buffer.concat([otherIssuerPublic, flipBit(issuerPublic, 500)])), 'MALFORMED');
  t.is(control(FrameKind.SET_ISSUER, Buffer.concat([otherIssuerPublic, zeros, Buffer.from([0])])), 'MALFORMED');
  const d = decide(
    config,
    state,
    conditions,
    signRawCommand({
      privateKey: issuerPrivate,
      keyId: 9,
      scope: 7,
      body: Buffer.from('6955b9006955d520010121', 'hex'),
    }),
  );
  t.is(name(d.status), 'MALFORMED');
  t.is(d.keyId, 9);
  t.is(d.remaining, 0xff);
});

test('step 6: SET_ISSUER replaces both keys at once; replayed it is REPLAY; the new key signs, the dropped one no longer does', (t) => {
  const rotate = decide(config, state, conditions, setIssuer(6, otherIssuerPublic, issuerPublic));
  t.is(name(rotate.status), 'OK');
  t.deepEqual(rotate.state.issuerKey, otherIssuerPublic);
  t.deepEqual(rotate.state.issuerKeyPrevious, issuerPublic);
  t.is(rotate.state.lastControlSeq, 6);
  t.is(rotate.fields.direction, Direction.CONTROL);
  t.is(name(decide(config, rotate.state, conditions, signedAccess()).status), 'OK', 'the previous issuer still signs');
  t.is(name(decide(config, rotate.state, conditions, signedAccess({ privateKey: otherIssuerPrivate })).status), 'OK');
  t.is(name(decide(config, rotate.state, conditions, setIssuer(6, otherIssuerPublic, null)).status), 'REPLAY');
  const drop = decide(config, rotate.state, conditions, setIssuer(7, otherIssuerPublic, null));
  t.is(drop.state.issuerKeyPrevious, null);
  t.is(name(decide(config, drop.state, conditions, signedAccess()).status), 'AUTH_FAILED');
  t.is(state.issuerKey, issuerPublic, 'the input state is untouched');
});

test('step 6: REVOKE forgets dead entries, adds its own (later until wins), REVOCATION_FULL past the capacity with the list as it was and the sequence accepted', (t) => {
  const now = conditions.boxTime;
  const first = decide(
    config,
    state,
    { ...conditions, batteryMv: 0, jammed: true },
    revoke(6, [
      { keyId: 42, until: T0 + HOUR },
      { keyId: 43, until: T0 },
    ]),
  );
  t.is(name(first.status), 'OK', 'battery and barrier do not refuse a control command');
  t.deepEqual(
    [...first.state.revocations],
    [
      [42, T0 + HOUR],
      [43, T0],
    ],
  );
  const later = decide(
    config,
    first.state,
    conditions,
    revoke(7, [
      { keyId: 42, until: T0 + 2 * HOUR },
      { keyId: 43, until: T0 - HOUR },
    ]),
  );
  t.deepEqual([...later.state.revocations].sort(), [
    [42, T0 + 2 * HOUR],
    [43, T0],
  ]);
  const full = new Map(Array.from({ length: 64 }, (_, i) => [1000 + i, T0 + HOUR] as [number, number]));
  const refused = decide(
    config,
    { ...state, revocations: full },
    conditions,
    revoke(6, [{ keyId: 42, until: T0 + HOUR }]),
  );
  t.is(name(refused.status), 'REVOCATION_FULL');
  t.is(refused.state.revocations, full);
  t.is(refused.state.lastControlSeq, 6, 'the sequence counts as accepted whatever follows');
  t.is(name(decide(config, refused.state, conditions, revoke(6, [{ keyId: 42, until: T0 + HOUR }])).status), 'REPLAY');
  t.is(
    name(
      decide(config, { ...state, revocations: full }, conditions, revoke(6, [{ keyId: 1000, until: T0 + 9 * HOUR }]))
        .status,
    ),
    'OK',
    'a listed id needs no room',
  );
  const oneDead = new Map(full).set(1063, now - 121);
  const fits = decide(
    config,
    { ...state, revocations: oneDead },
    conditions,
    revoke(6, [{ keyId: 42, until: T0 + HOUR }]),
  );
  t.is(name(fits.status), 'OK');
  t.false(fits.state.revocations.has(1063));
  t.is(fits.state.revocations.size, 64);
  const small = { ...config, revocationCapacity: 2 };
  t.is(
    name(
      decide(
        small,
        state,
        conditions,
        revoke(6, [
          { keyId: 1, until: T0 },
          { keyId: 2, until: T0 },
          { keyId: 3, until: T0 },
        ]),
      ).status,
    ),
    'REVOCATION_FULL',
  );
  t.is(
    name(
      decide(
        { ...config, revocationCapacity: 65 },
        { ...state, revocations: full },
        conditions,
        revoke(6, [{ keyId: 42, until: T0 }]),
      ).status,
    ),
    'OK',
    'a box may hold more',
  );
});

test('step 8a: a live revocation refuses both access kinds with REVOKED after steps 7 and 8, spends no try; an expired one does not refuse', (t) => {
  const revoked = { ...state, revocations: new Map([[42, T0 + HOUR]]) };
  for (const frame of [signedAccess(), access()]) {
    const d = decide(config, revoked, conditions, frame);
    t.is(name(d.status), 'REVOKED');
    t.is(d.remaining, 2, 'remaining shows the unchanged count');
    t.is(d.state.tries, revoked.tries, 'no try spent');
    t.deepEqual(d.effect, { type: 'none' });
  }
  t.is(name(decide(config, revoked, conditions, signedAccess({ keyId: 43 })).status), 'OK', 'another key');
  t.is(name(decide(config, revoked, { ...conditions, boxTime: T0 - 1000 }, signedAccess()).status), 'NOT_YET_VALID');
  t.is(name(decide(config, revoked, conditions, signedAccess({ body: { moduleIds: [102] } })).status), 'WRONG_MODULE');
  const exhausted = { ...revoked, tries: new Map([[42, { count: 2, notAfter: T0 + 2 * HOUR }]]) };
  t.is(name(decide(config, exhausted, conditions, signedAccess()).status), 'REVOKED', 'before the tries');
  const at = (boxTime: number): string =>
    name(
      decide(config, { ...state, revocations: new Map([[42, T0]]) }, { ...conditions, boxTime }, signedAccess()).status,
    );
  t.is(at(T0 + 120), 'REVOKED', 'until + skew = box_time still refuses');
  t.is(at(T0 + 121), 'OK');
});

test('step 9: tries are counted per key_id whichever access kind carried it; the response binds the signed command', (t) => {
  const first = decide(config, state, conditions, signedAccess());
  t.is(first.remaining, 1);
  t.is(first.kind, FrameKind.ACCESS_SIGNED);
  t.deepEqual(first.effect, { type: 'open' });
  t.false(verifyResponse(first.response, boxKey, signedAccess()), 'another nonce: another command');
  const frame = signedAccess();
  t.true(verifyResponse(decide(config, state, conditions, frame).response, boxKey, frame));
  const second = decide(config, first.state, conditions, access());
  t.is(second.remaining, 0);
  t.is(name(decide(config, second.state, conditions, signedAccess()).status), 'NO_TRIES_LEFT');
});

test('a new box: initialBoxState holds no issuer key and an empty list unless seeded from its provisioning file', (t) => {
  const blank = initialBoxState();
  t.is(blank.issuerKey, null);
  t.is(blank.revocations.size, 0);
  t.is(name(decide(config, blank, conditions, signedAccess()).status), 'AUTH_FAILED');
  const seeded = initialBoxState({ issuerKey: issuerPublic });
  t.is(name(decide(config, seeded, conditions, signedAccess()).status), 'OK');
  // Bare node:crypto agrees with the frame layout: r || s of 64 bytes.
  const sig = sign('sha256', Buffer.from('x'), {
    key: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey,
    dsaEncoding: 'ieee-p1363',
  });
  t.is(sig.length, 64);
});
