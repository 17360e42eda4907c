// Command and response codecs (docs/protocol.md, Command frame, response frame,
// keys): sealing, opening, header decoding, tags in constant time, and the
// CCM empty-plaintext trap.
import { createCipheriv, createDecipheriv } from 'node:crypto';
import test from 'ava';
import {
  Barrier,
  FrameKind,
  MAX_COMMAND_LENGTH,
  MAX_SEALED_COMMAND_LENGTH,
  signAccessCommand,
  ProtocolError,
  type ResponseFields,
  Status,
  openCommand,
  parseCommandHeader,
  parseResponse,
  sealCommand,
  sealResponse,
  verifyResponse,
  verifyResponses,
} from '../../firmware-protocol/index.js';
import {
  T0,
  access,
  body,
  boxKey,
  flipBit,
  issuerPrivate,
  otherKey,
  parkingKey,
  parkingKeyNext,
  timeSet,
} from '../helpers/protocol-fixtures.js';

const fields: ResponseFields = {
  status: Status.OK,
  kind: FrameKind.ACCESS,
  moduleId: 101,
  keyId: 42,
  boxSeq: 5,
  boxTime: T0,
  batteryMv: 3700,
  barrier: Barrier.OPENING,
  direction: 1,
  remaining: 2,
};

test('command layout: version, kind, key_id, scope, nonce, ciphertext, tag at the offsets of docs/protocol.md', (t) => {
  const nonce = Buffer.from('0102030405060708090a0b0c', 'hex');
  const frame = sealCommand({
    key: parkingKey,
    kind: FrameKind.ACCESS,
    keyId: 0x01020304,
    scope: 0x0a0b0c0d,
    nonce,
    body,
  });
  t.is(frame.length, 22 + 11 + 4 * 2 + 8);
  t.is(frame.subarray(0, 22).toString('hex'), '0101' + '01020304' + '0a0b0c0d' + '0102030405060708090a0b0c');
  // Independent check with node:crypto directly: AAD = bytes 0..21, M = 8.
  const cipher = createCipheriv('aes-128-ccm', parkingKey, nonce, { authTagLength: 8 });
  const plain = Buffer.from('6955b9006955d5200201020000006500000066', 'hex');
  cipher.setAAD(frame.subarray(0, 22), { plaintextLength: plain.length });
  const ct = Buffer.concat([cipher.update(plain), cipher.final()]);
  t.is(frame.subarray(22).toString('hex'), Buffer.concat([ct, cipher.getAuthTag()]).toString('hex'));
});

test('sealCommand draws a fresh random nonce when none is given', (t) => {
  const a = access();
  const b = access();
  t.notDeepEqual(a.subarray(10, 22), b.subarray(10, 22));
});

test('docs/protocol.md, Sizes: the longest sealed ACCESS is 169 bytes, the longest command (ACCESS_SIGNED, 32 modules) 225; BATTERY_QUERY 30; TIME_SET 34', (t) => {
  const ids = Array.from({ length: 32 }, (_, i) => i + 1);
  t.is(
    sealCommand({ key: parkingKey, kind: FrameKind.ACCESS, keyId: 1, scope: 7, body: { ...body, moduleIds: ids } })
      .length,
    MAX_SEALED_COMMAND_LENGTH,
  );
  t.is(MAX_SEALED_COMMAND_LENGTH, 169);
  t.is(
    signAccessCommand({ privateKey: issuerPrivate, keyId: 1, scope: 7, body: { ...body, moduleIds: ids } }).length,
    MAX_COMMAND_LENGTH,
  );
  t.is(MAX_COMMAND_LENGTH, 225);
  t.is(sealCommand({ key: boxKey, kind: FrameKind.BATTERY_QUERY, keyId: 1, scope: 7 }).length, 30);
  t.is(timeSet(1).length, 34);
});

test('sealCommand refuses bad inputs with a typed error', (t) => {
  const bad = [
    () => sealCommand({ key: parkingKey.subarray(0, 15), kind: FrameKind.ACCESS, keyId: 1, scope: 7, body }),
    () => sealCommand({ key: parkingKey, kind: FrameKind.ACCESS, keyId: -1, scope: 7, body }),
    () => sealCommand({ key: parkingKey, kind: FrameKind.ACCESS, keyId: 2 ** 32, scope: 7, body }),
    () =>
      sealCommand({ key: parkingKey, kind: FrameKind.ACCESS, keyId: 1, scope: 7, body: { ...body, moduleIds: [] } }),
    () =>
      sealCommand({
        key: parkingKey,
        kind: FrameKind.ACCESS,
        keyId: 1,
        scope: 7,
        body: { ...body, moduleIds: Array.from({ length: 33 }, () => 1) },
      }),
    () =>
      sealCommand({ key: parkingKey, kind: FrameKind.ACCESS, keyId: 1, scope: 7, body: { ...body, maxEntries: 256 } }),
    () => sealCommand({ key: parkingKey, kind: FrameKind.ACCESS, keyId: 1, scope: 7, body, nonce: Buffer.alloc(11) }),
    () => sealCommand({ key: parkingKey, kind: 9 as 1, keyId: 1, scope: 7, body }),
  ];
  for (const fn of bad) t.throws(fn, { instanceOf: ProtocolError });
});

test('openCommand: the right key opens, others give AUTH_FAILED; keys are tried in order', (t) => {
  const frame = access();
  const opened = openCommand(frame, parkingKey);
  t.true(opened.ok);
  if (opened.ok && opened.command.kind === FrameKind.ACCESS) t.deepEqual(opened.command.body, body);
  t.like(openCommand(frame, otherKey), { ok: false, status: Status.AUTH_FAILED });
  t.like(openCommand(frame, [otherKey, parkingKeyNext, parkingKey]), { ok: true, keyIndex: 2 });
  t.like(openCommand(frame, []), { ok: false, status: Status.AUTH_FAILED });
  t.like(openCommand(frame, Buffer.alloc(3)), { ok: false, status: Status.AUTH_FAILED });
});

test('openCommand gives steps 1, 2 and 5 statuses, never throws', (t) => {
  t.like(openCommand(Buffer.alloc(0), parkingKey), { ok: false, status: Status.MALFORMED, header: null });
  t.like(openCommand(Buffer.from([2, 1]), parkingKey), { ok: false, status: Status.UNSUPPORTED_VERSION });
  t.like(openCommand(access().subarray(0, 29), parkingKey), { ok: false, status: Status.MALFORMED });
  const truncated = openCommand(access().subarray(0, 40), parkingKey);
  t.like(truncated, { ok: false, status: Status.AUTH_FAILED });
  if (!truncated.ok) t.is(truncated.header?.keyId, 42);
});

test('parseCommandHeader reads the header without a key', (t) => {
  const parsed = parseCommandHeader(timeSet(77));
  if (!parsed.ok) return t.fail();
  t.like(parsed.header, { version: 1, kind: FrameKind.TIME_SET, keyId: 77, scope: 101, bodyLength: 4 });
  t.is(parsed.header.nonce.length, 12);
});

test('response layout and parse: every field at its offset; the nonce is module_id || box_seq || box_time', (t) => {
  const command = access();
  const frame = sealResponse(fields, boxKey, command);
  t.is(frame.length, 32);
  t.is(
    frame.subarray(0, 24).toString('hex'),
    '0100' + '01' + '00000065' + '0000002a' + '00000005' + '6955b900' + '0e74' + '01' + '01' + '02',
  );
  const nonce = Buffer.concat([frame.subarray(3, 7), frame.subarray(11, 19)]);
  const cipher = createCipheriv('aes-128-ccm', boxKey, nonce, { authTagLength: 8 });
  cipher.setAAD(Buffer.concat([frame.subarray(0, 24), command.subarray(10, 22)]), { plaintextLength: 0 });
  cipher.update(Buffer.alloc(0));
  cipher.final();
  t.deepEqual(frame.subarray(24), cipher.getAuthTag());
  const { version, tag, ...parsed } = parseResponse(frame);
  t.is(version, 1);
  t.is(tag.length, 8);
  t.deepEqual(parsed, fields);
});

test('verifyResponse: true for the right key and command; false for another key, command, or a status report AAD', (t) => {
  const command = access();
  const frame = sealResponse(fields, boxKey, command);
  t.true(verifyResponse(frame, boxKey, command));
  t.false(verifyResponse(frame, otherKey, command));
  t.false(verifyResponse(frame, boxKey, access()));
  t.false(verifyResponse(frame, boxKey, null));
  t.false(verifyResponse(frame.subarray(0, 31), boxKey, command));
  t.false(verifyResponse(Buffer.concat([frame, Buffer.alloc(1)]), boxKey, command));
  t.false(verifyResponse(frame, boxKey.subarray(0, 8), command));
});

test('verifyResponses answers as verifyResponse does for each response of a mixed batch, in order', (t) => {
  const command = access();
  const sealed = (boxSeq: number) => sealResponse({ ...fields, boxSeq }, boxKey, command);
  const tampered = sealed(3);
  tampered[20] = (tampered[20] ?? 0) ^ 1;
  const wrongVersion = sealed(4);
  wrongVersion[0] = 2;
  const items = [
    { response: sealed(1), command },
    { response: sealed(2).subarray(0, 31), command },
    { response: tampered, command },
    { response: sealed(5), command: access() },
    { response: sealed(6), command: null },
    { response: sealResponse({ ...fields, boxSeq: 7 }, boxKey, null), command: null },
    { response: wrongVersion, command },
    { response: sealed(8), command },
  ];
  const expected = items.map(({ response, command: answered }) => verifyResponse(response, boxKey, answered));
  t.deepEqual(expected, [true, false, false, false, false, true, false, true]);
  t.deepEqual(verifyResponses(items, boxKey), expected);
  t.deepEqual(
    verifyResponses(items, otherKey),
    items.map(() => false),
  );
  t.deepEqual(
    verifyResponses(items, boxKey.subarray(0, 8)),
    items.map(() => false),
  );
  t.deepEqual(verifyResponses([], boxKey), []);
});

test('a forged response tag is refused (docs/protocol.md, Keys: the CCM empty-plaintext trap)', (t) => {
  const command = access();
  const frame = sealResponse(fields, boxKey, command);
  const forged = Buffer.from(frame);
  forged.fill(0x5a, 24);
  t.false(verifyResponse(forged, boxKey, command));
  // The trap itself, shown on node:crypto: a CCM decipher whose update() is
  // never called accepts any tag; with update(empty) it refuses it.
  const nonce = Buffer.concat([frame.subarray(3, 7), frame.subarray(11, 19)]);
  const aad = Buffer.concat([frame.subarray(0, 24), command.subarray(10, 22)]);
  const decipher = (withUpdate: boolean): boolean => {
    const d = createDecipheriv('aes-128-ccm', boxKey, nonce, { authTagLength: 8 });
    d.setAuthTag(forged.subarray(24));
    d.setAAD(aad, { plaintextLength: 0 });
    if (withUpdate) d.update(Buffer.alloc(0));
    try {
      d.final();
      return true;
    } catch {
      return false;
    }
  };
  t.false(decipher(true));
  t.log(`without update(), node accepts the forged tag: ${String(decipher(false))}`);
});

test('parseResponse throws ProtocolError on a bad length, version, status, barrier or direction', (t) => {
  const frame = sealResponse(fields, boxKey, null);
  t.throws(() => parseResponse(frame.subarray(0, 31)), { instanceOf: ProtocolError, message: /32 bytes/ });
  const mutate = (offset: number, value: number): Buffer => {
    const copy = Buffer.from(frame);
    copy[offset] = value;
    return copy;
  };
  t.throws(() => parseResponse(mutate(0, 2)), { instanceOf: ProtocolError, message: /version/ });
  t.throws(() => parseResponse(mutate(1, 0x40)), { instanceOf: ProtocolError });
  t.throws(() => parseResponse(mutate(21, 5)), { instanceOf: ProtocolError });
  t.throws(() => parseResponse(mutate(22, 3)), { instanceOf: ProtocolError });
});

test('sealResponse refuses out-of-range fields with a typed error', (t) => {
  t.throws(() => sealResponse({ ...fields, batteryMv: 70000 }, boxKey, null), { instanceOf: ProtocolError });
  t.throws(() => sealResponse({ ...fields, status: 0x99 as 0 }, boxKey, null), { instanceOf: ProtocolError });
  t.throws(() => sealResponse({ ...fields, boxSeq: 2 ** 32 }, boxKey, null), { instanceOf: ProtocolError });
  t.throws(() => sealResponse(fields, boxKey.subarray(1), null), { instanceOf: ProtocolError });
});

test('a single flipped bit of a command or response is refused (exhaustive over one frame)', (t) => {
  const command = access();
  for (let bit = 0; bit < command.length * 8; bit++) {
    const opened = openCommand(flipBit(command, bit), parkingKey);
    if (opened.ok) t.fail(`bit ${bit} still opens`);
  }
  const response = sealResponse(fields, boxKey, command);
  for (let bit = 0; bit < 256; bit++) t.false(verifyResponse(flipBit(response, bit), boxKey, command));
  for (let bit = 80; bit < 176; bit++)
    t.false(verifyResponse(response, boxKey, flipBit(command, bit)), `command bit ${bit}`);
  t.pass();
});
