// lib/capture/opened.ts: the data of opened records (docs/capture.md,
// Opened records) for commands of every kind and outcome, and for
// responses; never a key.
import test from 'ava';
import {
  Barrier,
  Direction,
  FrameKind,
  Status,
  issuerKeyFingerprint,
  sealRawCommand,
  sealResponse,
} from '../../firmware-protocol/index.js';
import { openedCommandData, openedResponseData, type BoxKeys } from '../../lib/capture/opened.js';
import {
  access,
  batteryQuery,
  body,
  boxKey,
  issuerPublic,
  otherIssuerPublic,
  otherKey,
  parkingKey,
  parkingKeyNext,
  revoke,
  setIssuer,
  signedAccess,
  timeSet,
  T0,
  HOUR,
} from '../helpers/protocol-fixtures.js';

const keys: BoxKeys = { parkingKeys: [parkingKey], boxKey, issuerKeys: [issuerPublic, null] };

const u32 = (value: number): string => value.toString(16).padStart(8, '0');
const accessFields = `${u32(body.notBefore)}${u32(body.notAfter)}0201` + `02${u32(101)}${u32(102)}`;
const digits = (publicKey: Uint8Array): string => issuerKeyFingerprint(publicKey).slice('sha256:'.length);

test('an opened command of each kind: its kind, outcome 0, and the body fields as the protocol lays them out', (t) => {
  t.is(openedCommandData(access(), keys)?.toString('hex'), `0100${accessFields}`);
  t.is(openedCommandData(signedAccess(), keys)?.toString('hex'), `0400${accessFields}`);
  t.is(openedCommandData(batteryQuery(6), keys)?.toString('hex'), '0200');
  t.is(openedCommandData(timeSet(7, { time: T0 + HOUR }), keys)?.toString('hex'), `0300${u32(T0 + HOUR)}`);
  t.is(
    openedCommandData(
      revoke(8, [
        { keyId: 42, until: T0 },
        { keyId: 43, until: T0 + HOUR },
      ]),
      keys,
    )?.toString('hex'),
    `050002${u32(42)}${u32(T0)}${u32(43)}${u32(T0 + HOUR)}`,
  );
});

test("SET_ISSUER: the keys' fingerprints, the digits of issuerKeyFingerprint, zero for no previous key", (t) => {
  t.is(
    openedCommandData(setIssuer(9, otherIssuerPublic, issuerPublic), keys)?.toString('hex'),
    `0600${digits(otherIssuerPublic)}${digits(issuerPublic)}`,
  );
  t.is(
    openedCommandData(setIssuer(9, otherIssuerPublic, null), keys)?.toString('hex'),
    `0600${digits(otherIssuerPublic)}00000000`,
  );
});

test('opened under any key the tool holds: the next parking key, the previous issuer key', (t) => {
  t.is(openedCommandData(access({ key: parkingKeyNext }), { parkingKeys: [parkingKey, parkingKeyNext] })?.[1], 0);
  t.is(openedCommandData(signedAccess(), { issuerKeys: [otherIssuerPublic, issuerPublic] })?.[1], 0);
});

test('not verified under any key held: outcome 1 and no body, a missing key as well as a wrong one', (t) => {
  const notVerified = (frame: Buffer, held: BoxKeys): string | undefined =>
    openedCommandData(frame, held)?.toString('hex');
  t.is(notVerified(access({ key: otherKey }), keys), '0101');
  t.is(notVerified(access(), { boxKey }), '0101', 'no parking key held');
  t.is(notVerified(signedAccess(), { issuerKeys: [otherIssuerPublic] }), '0401');
  t.is(notVerified(signedAccess(), {}), '0401', 'no issuer key held');
  t.is(notVerified(timeSet(7, { key: otherKey }), keys), '0301');
  t.is(notVerified(batteryQuery(6), { parkingKeys: [parkingKey] }), '0201', 'no box key held');
});

test('verified but a body of the wrong length (MALFORMED): outcome 2 and no body', (t) => {
  const frame = sealRawCommand({
    key: boxKey,
    kind: FrameKind.TIME_SET,
    keyId: 7,
    scope: 101,
    plaintext: Buffer.alloc(3),
  });
  t.is(openedCommandData(frame, keys)?.toString('hex'), '0302');
  const noModules = sealRawCommand({
    key: parkingKey,
    kind: FrameKind.ACCESS,
    keyId: 42,
    scope: 7,
    plaintext: Buffer.alloc(11),
  });
  t.is(openedCommandData(noModules, keys)?.toString('hex'), '0102');
});

test('a frame whose header does not parse has no opened record', (t) => {
  const frame = access();
  t.is(openedCommandData(frame.subarray(0, 21), keys), null, 'shorter than 22 bytes');
  t.is(openedCommandData(frame.subarray(0, 29), keys), null, 'shorter than the fixed part');
  t.is(openedCommandData(Buffer.concat([Buffer.from([2]), frame.subarray(1)]), keys), null, 'another version');
  t.is(openedCommandData(Buffer.concat([frame.subarray(0, 1), Buffer.from([7]), frame.subarray(2)]), keys), null);
});

test('a response: the kind it answers, and whether its tag verifies for the command it answers', (t) => {
  const command = access();
  const fields = {
    status: Status.OK,
    kind: FrameKind.ACCESS,
    moduleId: 101,
    keyId: 42,
    boxSeq: 17,
    boxTime: T0,
    batteryMv: 3700,
    barrier: Barrier.OPENING,
    direction: Direction.ENTRANCE,
    remaining: 1,
  };
  const response = sealResponse(fields, boxKey, command);
  t.is(openedResponseData(response, boxKey, command).toString('hex'), '0100');
  t.is(openedResponseData(response, boxKey, access()).toString('hex'), '0101', 'the answer to another command');
  t.is(openedResponseData(response, otherKey, command).toString('hex'), '0101', 'under another box key');
  const tampered = Buffer.from(response);
  tampered[31] = (tampered[31] ?? 0) ^ 1;
  t.is(openedResponseData(tampered, boxKey, command).toString('hex'), '0101', 'a changed tag');
  const report = sealResponse({ ...fields, kind: 0, keyId: 0, remaining: 0xff }, boxKey, null);
  t.is(openedResponseData(report, boxKey, null).toString('hex'), '0000', 'a status report');
  t.is(openedResponseData(Buffer.alloc(0), boxKey, null).toString('hex'), '0001', 'an empty frame');
});

test('an opened record never holds a key', (t) => {
  const held = [parkingKey, boxKey, issuerPublic, otherIssuerPublic];
  const data = [
    openedCommandData(access(), keys),
    openedCommandData(signedAccess(), keys),
    openedCommandData(setIssuer(9, otherIssuerPublic, issuerPublic), keys),
    openedCommandData(timeSet(7), keys),
  ];
  for (const each of data) {
    if (each === null) return t.fail('each opens');
    for (const key of held) t.is(each.indexOf(Buffer.from(key).subarray(0, 8)), -1);
  }
});
