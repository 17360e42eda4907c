// tools/wireshark/parkbench.lua, run by tshark over a capture written with
// lib/capture: the command and response frames of the box protocol
// (docs/protocol.md) on every link, each field as sealed, statuses by name
// and by filter, and the Info column.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { FrameKind, Status } from '../../firmware-protocol/index.js';
import { testNeeding } from '../helpers/requires.js';
import { SAMPLE_MODULE_ID, writeSampleCapture } from '../helpers/sample-capture.js';
import { dissect, framesMatching } from '../helpers/tshark.js';

const withTshark = testNeeding('tshark', test);
const folder = mkdtempSync(join(tmpdir(), 'pb-dissector-frames-'));
test.after.always(() => rmSync(folder, { recursive: true, force: true }));
const sample = writeSampleCapture(join(folder, 'sample.pcapng'));

const sorted = <T extends string | number>(values: readonly T[]): T[] =>
  [...new Set(values)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
const hex = (value: number, digits = 2): string => `0x${value.toString(16).padStart(digits, '0')}`;

withTshark('every command kind, on every link: kind, key_id, scope and nonce as sealed', async (t) => {
  const packets = await dissect(
    sample.path,
    ['parkbench.kind', 'parkbench.key_id', 'parkbench.scope', 'parkbench.nonce'],
    {
      filter: 'parkbench.command',
    },
  );
  t.deepEqual(
    packets.map((packet) => packet.frame),
    sample.commands.map((command) => command.frame),
  );
  t.deepEqual(sorted(sample.commands.map((command) => command.kind)), sorted(Object.values(FrameKind)));
  t.deepEqual(sorted(sample.commands.map((command) => command.link)), ['ble', 'mqtt', 'serial']);
  for (const [index, packet] of packets.entries()) {
    const command = sample.commands[index];
    if (command === undefined) return t.fail(`no command written for frame ${packet.frame}`);
    t.deepEqual(
      packet.fields,
      {
        'parkbench.kind': [hex(command.kind)],
        'parkbench.key_id': [String(command.keyId)],
        'parkbench.scope': [String(command.scope)],
        'parkbench.nonce': [command.bytes.subarray(10, 22).toString('hex')],
      },
      `frame ${packet.frame}`,
    );
  }
});

withTshark(
  'a sealed command shows its ciphertext and tag; an ACCESS_SIGNED its clear body and signature',
  async (t) => {
    const fields = [
      'parkbench.ciphertext',
      'parkbench.tag',
      'parkbench.body',
      'parkbench.signature',
      'parkbench.not_before',
      'parkbench.module_count',
      'parkbench.module',
    ];
    const packets = await dissect(sample.path, fields, { filter: 'parkbench.command' });
    t.true(
      sample.commands.some((command) => command.bytes.length === 225),
      'the longest frame, 32 modules, among them',
    );
    for (const [index, packet] of packets.entries()) {
      const command = sample.commands[index];
      if (command === undefined) return t.fail(`no command written for frame ${packet.frame}`);
      const { bytes } = command;
      if (command.kind === FrameKind.ACCESS_SIGNED) {
        const body = bytes.subarray(22, bytes.length - 64);
        t.deepEqual(packet.fields['parkbench.body'], [body.toString('hex')]);
        t.deepEqual(packet.fields['parkbench.signature'], [bytes.subarray(bytes.length - 64).toString('hex')]);
        t.deepEqual(packet.fields['parkbench.not_before'], [String(body.readUInt32BE(0))]);
        const count = body.readUInt8(10);
        t.deepEqual(packet.fields['parkbench.module_count'], [String(count)]);
        t.deepEqual(
          packet.fields['parkbench.module'],
          Array.from({ length: count }, (_, at) => String(body.readUInt32BE(11 + 4 * at))),
        );
        t.deepEqual(packet.fields['parkbench.ciphertext'], []);
        t.deepEqual(packet.fields['parkbench.tag'], []);
      } else {
        const ciphertext = bytes.subarray(22, bytes.length - 8).toString('hex');
        t.deepEqual(packet.fields['parkbench.ciphertext'], ciphertext === '' ? [] : [ciphertext]);
        t.deepEqual(packet.fields['parkbench.tag'], [bytes.subarray(bytes.length - 8).toString('hex')]);
        t.deepEqual(packet.fields['parkbench.signature'], []);
        t.deepEqual(packet.fields['parkbench.module'], [], 'a sealed body is not read without its key');
      }
    }
  },
);

withTshark(
  "every field of every response (docs/protocol.md, Response frame), the status report's among them",
  async (t) => {
    const fields = [
      'parkbench.version',
      'parkbench.status',
      'parkbench.kind',
      'parkbench.module_id',
      'parkbench.key_id',
      'parkbench.box_seq',
      'parkbench.box_time',
      'parkbench.battery_mv',
      'parkbench.barrier',
      'parkbench.box_direction',
      'parkbench.remaining',
      'parkbench.tag',
    ];
    const packets = await dissect(sample.path, fields, { filter: 'parkbench.response' });
    t.deepEqual(
      packets.map((packet) => packet.frame),
      sample.responses.map((response) => response.frame),
    );
    for (const [index, packet] of packets.entries()) {
      const response = sample.responses[index];
      if (response === undefined) return t.fail(`no response written for frame ${packet.frame}`);
      const { fields: written } = response;
      t.deepEqual(
        packet.fields,
        {
          'parkbench.version': ['0x01'],
          'parkbench.status': [hex(written.status)],
          'parkbench.kind': [hex(written.kind)],
          // The record header's module id, then the response's own.
          'parkbench.module_id': [String(SAMPLE_MODULE_ID), String(written.moduleId)],
          'parkbench.key_id': [String(written.keyId)],
          'parkbench.box_seq': [String(written.boxSeq)],
          'parkbench.box_time': [String(written.boxTime)],
          'parkbench.battery_mv': [String(written.batteryMv)],
          'parkbench.barrier': [String(written.barrier)],
          'parkbench.box_direction': [String(written.direction)],
          'parkbench.remaining': [String(written.remaining)],
          'parkbench.tag': [written.tag.toString('hex')],
        },
        `frame ${packet.frame}`,
      );
    }
  },
);

withTshark('`parkbench.status == 0x20` finds every AUTH_FAILED, on every link, and nothing else', async (t) => {
  const authFailed = sample.responses.filter((response) => response.fields.status === Status.AUTH_FAILED);
  t.true(new Set(authFailed.map((response) => response.link)).size >= 2, 'AUTH_FAILED on serial and on MQTT');
  t.deepEqual(
    await framesMatching(sample.path, 'parkbench.status == 0x20'),
    authFailed.map((response) => response.frame),
  );
  const statuses = new Set(sample.responses.map((response) => response.fields.status));
  t.true(statuses.size >= 8, `statuses written: ${[...statuses].map((status) => hex(status)).join(' ')}`);
  for (const status of statuses) {
    t.deepEqual(
      await framesMatching(sample.path, `parkbench.status == ${hex(status)}`),
      sample.responses.filter((response) => response.fields.status === status).map((response) => response.frame),
      hex(status),
    );
  }
});

withTshark(
  'the Info column says which way, which box, what kind, which key, what status and which box_seq',
  async (t) => {
    const info = new Map((await dissect(sample.path, [])).map((packet) => [packet.frame, packet.info]));
    const frame = (name: string): number => sample.named.get(name) ?? -1;
    const expected: readonly [string, string][] = [
      ['status request', '→ box 9101 status request'],
      ['status report', '← box 9101 status report OK seq 1 barrier CLOSED'],
      ['serial ACCESS command', '→ box 9101 ACCESS key 42'],
      ['serial ACCESS response', '← box 9101 OK ACCESS key 42 seq 2 remaining 1'],
      ['serial forged ACCESS response', '← box 9101 AUTH_FAILED ACCESS key 43 seq 3'],
      ['BATTERY_QUERY command', '→ box 9101 BATTERY_QUERY control 6'],
      ['REVOKE response', '← box 9101 REVOCATION_FULL REVOKE control 8 seq 7'],
      ['SET_ISSUER replayed response', '← box 9101 REPLAY SET_ISSUER control 9 seq 9'],
      ['expired ACCESS response', '← box 9101 EXPIRED ACCESS key 45 seq 12 remaining 2'],
    ];
    for (const [name, text] of expected) t.is(info.get(frame(name)), text, name);
    t.is(info.size, sample.packets);
    for (const [number, text] of info) t.regex(text, /^[→←] box 9101 \S/, `frame ${number}`);
  },
);
