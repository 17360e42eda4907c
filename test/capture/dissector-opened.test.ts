// tools/wireshark/parkbench.lua, run by tshark over a capture written with
// lib/capture: opened records (docs/capture.md, Opened records), for a
// command its outcome and its body's fields per kind, for a response
// whether its tag verified.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { FrameKind, issuerKeyFingerprint } from '../../firmware-protocol/index.js';
import { OpenedOutcome } from '../../lib/capture/opened.js';
import { HOUR, T0, issuerPublic, otherIssuerPublic } from '../helpers/protocol-fixtures.js';
import { testNeeding } from '../helpers/requires.js';
import { writeSampleCapture } from '../helpers/sample-capture.js';
import { dissect, framesMatching, isTrue, type DissectedPacket } from '../helpers/tshark.js';

const withTshark = testNeeding('tshark', test);
const folder = mkdtempSync(join(tmpdir(), 'pb-dissector-opened-'));
test.after.always(() => rmSync(folder, { recursive: true, force: true }));
const sample = writeSampleCapture(join(folder, 'sample.pcapng'));
/** The opened record that follows the frame `name` (a command's or a response's). */
const openedAfter = (name: string): number => {
  const frame = sample.named.get(name);
  if (frame === undefined) throw new Error(`the sample has no frame named ${name}`);
  return frame + 1;
};

const BODY_FIELDS = [
  'parkbench.kind',
  'parkbench.opened.outcome',
  'parkbench.not_before',
  'parkbench.not_after',
  'parkbench.max_entries',
  'parkbench.max_exits',
  'parkbench.module_count',
  'parkbench.module',
  'parkbench.time',
  'parkbench.revoke.count',
  'parkbench.revoke.key_id',
  'parkbench.revoke.until',
  'parkbench.issuer_key_fingerprint',
  'parkbench.issuer_key_previous_fingerprint',
] as const;

async function openedPackets(): Promise<Map<number, DissectedPacket>> {
  const packets = await dissect(sample.path, [...BODY_FIELDS, 'parkbench.opened.tag_verified'], {
    filter: 'parkbench.opened',
  });
  return new Map(packets.map((packet) => [packet.frame, packet]));
}

/** Only the fields given: the others are absent. */
function only(fields: Partial<Record<(typeof BODY_FIELDS)[number], string[]>>): Record<string, string[]> {
  return Object.fromEntries(BODY_FIELDS.map((field) => [field, fields[field] ?? []]));
}

const digits = (publicKey: Uint8Array): string => issuerKeyFingerprint(publicKey).slice('sha256:'.length);

withTshark('an opened command of each kind: its outcome and its body, field by field', async (t) => {
  const packets = await openedPackets();
  t.deepEqual(
    [...packets.keys()],
    sample.opened.map((opened) => opened.frame),
  );
  const fieldsOf = (frame: number): Record<string, readonly string[]> => {
    const fields: DissectedPacket['fields'] = packets.get(frame)?.fields ?? {};
    return Object.fromEntries(BODY_FIELDS.map((field) => [field, fields[field] ?? []]));
  };
  const access = {
    'parkbench.opened.outcome': ['0'],
    'parkbench.not_before': [String(T0)],
    'parkbench.not_after': [String(T0 + 2 * HOUR)],
    'parkbench.max_entries': ['2'],
    'parkbench.max_exits': ['1'],
    'parkbench.module_count': ['2'],
    'parkbench.module': ['9101', '9102'],
  };
  t.deepEqual(fieldsOf(openedAfter('serial ACCESS command')), only({ 'parkbench.kind': ['0x01'], ...access }));
  t.deepEqual(
    fieldsOf(openedAfter('ACCESS_SIGNED again command')),
    only({ 'parkbench.kind': ['0x04'], ...access, 'parkbench.max_entries': ['1'] }),
  );
  const signedOverBle = sample.opened.find((opened) => opened.link === 'ble' && opened.direction === 1);
  t.deepEqual(
    fieldsOf(signedOverBle?.frame ?? 0)['parkbench.module'],
    Array.from({ length: 32 }, (_, index) => String(9101 - 16 + index)),
  );
  t.deepEqual(
    fieldsOf(openedAfter('BATTERY_QUERY command')),
    only({ 'parkbench.kind': ['0x02'], 'parkbench.opened.outcome': ['0'] }),
  );
  t.deepEqual(
    fieldsOf(openedAfter('TIME_SET command')),
    only({ 'parkbench.kind': ['0x03'], 'parkbench.opened.outcome': ['0'], 'parkbench.time': [String(T0 + HOUR)] }),
  );
  t.deepEqual(
    fieldsOf(openedAfter('REVOKE command')),
    only({
      'parkbench.kind': ['0x05'],
      'parkbench.opened.outcome': ['0'],
      'parkbench.revoke.count': ['2'],
      'parkbench.revoke.key_id': ['42', '43'],
      'parkbench.revoke.until': [String(T0 + 2 * HOUR), String(T0 + 3 * HOUR)],
    }),
  );
  t.deepEqual(
    fieldsOf(openedAfter('SET_ISSUER command')),
    only({
      'parkbench.kind': ['0x06'],
      'parkbench.opened.outcome': ['0'],
      'parkbench.issuer_key_fingerprint': [digits(otherIssuerPublic)],
      'parkbench.issuer_key_previous_fingerprint': [digits(issuerPublic)],
    }),
  );
  t.deepEqual(
    fieldsOf(openedAfter('SET_ISSUER replayed command')),
    only({
      'parkbench.kind': ['0x06'],
      'parkbench.opened.outcome': ['0'],
      'parkbench.issuer_key_fingerprint': [digits(otherIssuerPublic)],
      'parkbench.issuer_key_previous_fingerprint': ['00000000'],
    }),
  );
  t.deepEqual(
    fieldsOf(openedAfter('serial forged ACCESS command')),
    only({ 'parkbench.kind': ['0x01'], 'parkbench.opened.outcome': ['1'] }),
  );
  t.deepEqual(
    fieldsOf(openedAfter('TIME_SET malformed command')),
    only({ 'parkbench.kind': ['0x03'], 'parkbench.opened.outcome': ['2'] }),
  );
  const kinds = new Set(sample.opened.filter((opened) => opened.direction === 1).map((opened) => opened.data[0]));
  t.deepEqual(
    [...kinds].sort(),
    Object.values(FrameKind).sort((a, b) => a - b),
  );
});

withTshark('opened records by filter: outcomes, and the Info column of each', async (t) => {
  const outcome = (value: number): number[] =>
    sample.opened.filter((opened) => opened.direction === 1 && opened.data[1] === value).map((opened) => opened.frame);
  t.deepEqual(
    await framesMatching(sample.path, `parkbench.opened.outcome == 1 && parkbench.direction == 1`),
    outcome(OpenedOutcome.notVerified),
  );
  t.deepEqual(await framesMatching(sample.path, `parkbench.opened.outcome == 2`), outcome(OpenedOutcome.malformedBody));
  t.deepEqual(await framesMatching(sample.path, 'parkbench.opened && parkbench.module == 9102'), [
    openedAfter('serial ACCESS command'),
    sample.opened.find((opened) => opened.link === 'ble')?.frame,
    openedAfter('expired ACCESS command'),
    openedAfter('ACCESS_SIGNED again command'),
    openedAfter('wrong parking ACCESS command'),
  ]);
  const info = new Map([...(await openedPackets()).values()].map((packet) => [packet.frame, packet.info]));
  t.is(
    info.get(openedAfter('serial ACCESS command')),
    '→ box 9101 opened ACCESS: opened 2026-01-01T00:00:00Z..2026-01-01T02:00:00Z entries 2 exits 1 modules 9101,9102',
  );
  t.is(
    info.get(sample.opened.find((opened) => opened.link === 'ble')?.frame ?? 0),
    '→ box 9101 opened ACCESS_SIGNED: opened 2026-01-01T00:00:00Z..2026-01-01T02:00:00Z entries 1 exits 1 modules 9085..9116 (32)',
  );
  t.is(info.get(openedAfter('TIME_SET command')), '→ box 9101 opened TIME_SET: opened time 2026-01-01T01:00:00Z');
  t.is(info.get(openedAfter('REVOKE command')), '→ box 9101 opened REVOKE: opened keys 42,43');
  t.is(
    info.get(openedAfter('SET_ISSUER command')),
    `→ box 9101 opened SET_ISSUER: opened issuer ${issuerKeyFingerprint(otherIssuerPublic)} previous ${issuerKeyFingerprint(issuerPublic)}`,
  );
  t.is(
    info.get(openedAfter('SET_ISSUER replayed command')),
    `→ box 9101 opened SET_ISSUER: opened issuer ${issuerKeyFingerprint(otherIssuerPublic)} previous none`,
  );
  t.is(info.get(openedAfter('mqtt forged ACCESS command')), '→ box 9101 opened ACCESS: not verified');
  t.is(info.get(openedAfter('TIME_SET malformed command')), '→ box 9101 opened TIME_SET: verified, body malformed');
  t.is(info.get(openedAfter('REVOKE response')), '← box 9101 opened answer to REVOKE: tag verified');
  t.is(
    info.get(openedAfter('SET_ISSUER replayed response')),
    '← box 9101 opened answer to SET_ISSUER: tag NOT verified',
  );
});

withTshark(
  'an opened response: the kind it answers, and whether its tag verified (the one changed on the way does not)',
  async (t) => {
    const packets = await openedPackets();
    const responses = sample.opened.filter((opened) => opened.direction === 2);
    t.true(responses.length > 5);
    for (const opened of responses) {
      const packet = packets.get(opened.frame);
      t.deepEqual(packet?.fields['parkbench.kind'], [`0x0${opened.data[0] ?? 0}`]);
      t.is(isTrue(packet?.fields['parkbench.opened.tag_verified']?.[0]), opened.data[1] === 0, `frame ${opened.frame}`);
    }
    t.deepEqual(await framesMatching(sample.path, 'parkbench.opened.tag_verified == 0'), [
      openedAfter('SET_ISSUER replayed response'),
    ]);
    t.deepEqual(await framesMatching(sample.path, 'parkbench.not_verified && parkbench.direction == 2'), [
      openedAfter('SET_ISSUER replayed response'),
    ]);
  },
);
