// A failing case's capture, opened with tshark and parkbench's Wireshark
// dissector (tools/wireshark/parkbench.lua). On serial, `parkbench sim
// --bug accept-expired` on a real pty pair fails "not_after just outside
// the skew", and that case's file (--capture-dir) shows the ACCESS the
// suite sent, the box's OK where EXPIRED was due, and what the suite read
// in each: the ACCESS's window, which ended more than the skew before it
// was sent, and the answer's tag verified. Over MQTT, a box with the
// accept-revoked bug on a real broker: the REVOKE's opened entry names the
// key the box then opens for.
import avaTest from 'ava';
import { join } from 'node:path';
import { FrameKind } from '../../firmware-protocol/index.js';
import { CaptureDirection, RecordKind } from '../../lib/capture/record.js';
import { Topics } from '../../lib/mqtt-topics.js';
import { capturedRecords } from '../helpers/conformance-capture.js';
import { brokerForTest } from '../helpers/broker.js';
import { boxFile, keysOf, type JsonReport } from '../helpers/conformance-fixtures.js';
import { conformance, simOnBroker } from '../helpers/conformance-mqtt-sim.js';
import { conformanceOnSerial, simOnPty } from '../helpers/conformance-serial-sim.js';
import { testNeeding } from '../helpers/requires.js';
import { dissect, isTrue, type DissectedPacket } from '../helpers/tshark.js';

const test = testNeeding(['socat', 'tshark'], avaTest);
const withTshark = testNeeding('tshark', avaTest);

const EXPIRED_CASE = 'not_after just outside the skew';
const FIELDS = [
  'frame.time_epoch',
  'parkbench.record',
  'parkbench.direction',
  'parkbench.flags.not_a_frame',
  'parkbench.link_type',
  'parkbench.kind',
  'parkbench.key_id',
  'parkbench.status',
  'parkbench.box_time',
  'parkbench.opened.outcome',
  'parkbench.not_before',
  'parkbench.not_after',
  'parkbench.module',
  'parkbench.opened.tag_verified',
] as const;

const one = (packet: DissectedPacket | undefined, field: string): string | undefined => packet?.fields[field]?.[0];

test("tshark with the dissector shows a failing case's command, the box's answer and the opened body", async (t) => {
  const { box, pair } = await simOnPty(t, 4290, ['--bug', 'accept-expired']);
  const cases = join(box.directory, 'cases');
  const result = await conformanceOnSerial(box, pair.b, ['--skip-wearing', '--capture-dir', cases]);
  t.is(result.code, 1, result.stderr);
  const report = JSON.parse(result.stdout) as JsonReport;
  const failed = report.results.find((entry) => entry.result === 'fail');
  t.is(failed?.name, EXPIRED_CASE);
  const file = failed?.capture ?? '';

  const packets = await dissect(file, FIELDS);
  t.is(packets.length, capturedRecords(file).records.length, 'every record dissected');
  const kindAccess = `0x${FrameKind.ACCESS.toString(16).padStart(2, '0')}`;
  const access = packets.filter((packet) => one(packet, 'parkbench.kind') === kindAccess);
  // The command on the wire, what the suite read in it, the box's answer, whether its tag verified.
  t.deepEqual(
    access.map((packet) => [one(packet, 'parkbench.record'), one(packet, 'parkbench.direction')]),
    [
      [String(RecordKind.wire), String(CaptureDirection.toBox)],
      [String(RecordKind.opened), String(CaptureDirection.toBox)],
      [String(RecordKind.wire), String(CaptureDirection.fromBox)],
      [String(RecordKind.opened), String(CaptureDirection.fromBox)],
    ],
  );
  const [command, openedCommand, answer, openedAnswer] = access;
  t.is(one(command, 'parkbench.link_type'), '0x01');
  t.false(isTrue(one(command, 'parkbench.flags.not_a_frame')));
  t.is(one(answer, 'parkbench.link_type'), '0x81');
  // The buggy box said OK (0x00) where EXPIRED (0x11) was due, echoing the command's key_id.
  t.is(one(answer, 'parkbench.status'), '0x00');
  t.is(one(answer, 'parkbench.key_id'), one(command, 'parkbench.key_id'));
  // The opened body: the window, which ended more than the skew before the box's time.
  t.is(one(openedCommand, 'parkbench.opened.outcome'), '0');
  t.deepEqual(openedCommand?.fields['parkbench.module'], ['4290']);
  const notAfter = Number(one(openedCommand, 'parkbench.not_after'));
  const sent = Number(one(command, 'frame.time_epoch'));
  t.true(Number(one(openedCommand, 'parkbench.not_before')) < notAfter);
  t.true(notAfter + box.provisioning.skewSeconds < sent, `not_after ${notAfter}, sent at ${sent}`);
  // The bug decides as if the box's clock read not_after, and says so in its box_time.
  t.is(Number(one(answer, 'parkbench.box_time')), notAfter);
  t.true(isTrue(one(openedAnswer, 'parkbench.opened.tag_verified')));
});

withTshark(
  "tshark with the dissector shows an MQTT case's messages, the frames inside them and the opened REVOKE",
  async (t) => {
    const broker = await brokerForTest(t);
    const box = await boxFile(t, 4291, keysOf('both'));
    await simOnBroker(t, box, broker.url, { bugs: ['accept-revoked'] });
    const result = await conformance(box, broker.url, [
      '--capture-dir',
      join(box.directory, 'cases'),
      '--skip-wearing',
    ]);
    t.is(result.code, 1, result.stderr);
    const failed = (JSON.parse(result.stdout) as JsonReport).results.find((entry) => entry.result === 'fail');
    t.is(failed?.name, 'a revoked key is REVOKED and spends no try');
    const packets = await dissect(failed?.capture ?? '', [
      'parkbench.record',
      'parkbench.direction',
      'parkbench.topic',
      'parkbench.kind',
      'parkbench.key_id',
      'parkbench.status',
      'parkbench.revoke.key_id',
    ]);
    const revoke = packets.findIndex(
      (packet) =>
        one(packet, 'parkbench.record') === String(RecordKind.opened) &&
        packet.fields['parkbench.revoke.key_id']?.length === 1,
    );
    t.true(revoke > 0, 'the opened REVOKE');
    const revokedKey = one(packets[revoke], 'parkbench.revoke.key_id');
    // The next command message is the ACCESS_SIGNED of that key; the box's answer to it, OK.
    const after = packets.slice(revoke + 1);
    const signedCommand = after.find((packet) => one(packet, 'parkbench.kind') === '0x04');
    t.is(one(signedCommand, 'parkbench.key_id'), revokedKey);
    t.is(one(signedCommand, 'parkbench.direction'), String(CaptureDirection.toBox));
    const answer = after
      .slice(signedCommand === undefined ? after.length : after.indexOf(signedCommand))
      .find(
        (packet) =>
          one(packet, 'parkbench.record') === String(RecordKind.frame) &&
          one(packet, 'parkbench.direction') === String(CaptureDirection.fromBox),
      );
    t.is(one(answer, 'parkbench.key_id'), revokedKey);
    t.is(one(answer, 'parkbench.status'), '0x00', 'OK where REVOKED (0x16) was due');
    t.true(
      packets.some((packet) => one(packet, 'parkbench.topic') === new Topics().box(4291, 'response')),
      'the response messages, with their topic',
    );
  },
);
