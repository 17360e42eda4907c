// PROTOCOL.md, test vectors: sealing the inputs gives the bytes; opening the
// bytes gives the inputs; the file on disk is what the generator makes.
import { readFileSync } from 'node:fs';
import test from 'ava';
import {
  type BoxState,
  FrameKind,
  LinkType,
  Status,
  crc16,
  decide,
  decodeLinkFrame,
  encodeLinkFrame,
  generateTestVectors,
  isLinkType,
  openCommand,
  parseResponse,
  sealCommand,
  sealResponseWithCommandNonce,
  statusName,
  testVectorsJson,
  verifyResponse,
} from '../../firmware-protocol/index.js';
import {
  type AccessBodyJson,
  type TestVectors,
  accessBodyFromJson,
  accessBodyToJson,
  responseFieldsFromJson,
  responseFieldsToJson,
} from '../../firmware-protocol/vector-format.js';

const file = readFileSync(new URL('../../firmware-protocol/test-vectors.json', import.meta.url), 'utf8');
const vectors = JSON.parse(file) as TestVectors;
const hex = (text: string): Buffer => Buffer.from(text, 'hex');

test('test-vectors.json is exactly what the generator makes (regenerate with parkbench protocol vectors)', (t) => {
  t.is(file, testVectorsJson());
  t.deepEqual(vectors, JSON.parse(JSON.stringify(generateTestVectors())) as TestVectors);
});

test('the file has the layout PROTOCOL.md fixes, and the minimum content', (t) => {
  t.is(vectors.version, 1);
  t.deepEqual(Object.keys(vectors).slice(0, 5), ['version', 'crc16', 'commands', 'responses', 'link_frames']);
  t.deepEqual(Object.keys(vectors.commands[0] ?? {}), ['name', 'key', 'kind', 'key_id', 'scope', 'nonce', 'body', 'bytes']);
  t.deepEqual(Object.keys(vectors.responses[0] ?? {}), ['name', 'box_key', 'command_nonce', 'fields', 'bytes']);
  t.deepEqual(Object.keys(vectors.responses[0]?.fields ?? {}), ['status', 'kind', 'module_id', 'key_id', 'box_seq', 'box_time', 'battery_mv', 'barrier', 'direction', 'remaining']);
  t.deepEqual(Object.keys(vectors.link_frames[0] ?? {}), ['name', 'type', 'payload', 'bytes']);
  const moduleCounts = vectors.commands.filter((c) => c.kind === FrameKind.ACCESS).map((c) => (c.body as AccessBodyJson).module_ids.length);
  t.true(moduleCounts.includes(1) && moduleCounts.includes(32));
  t.true(vectors.commands.some((c) => c.kind === FrameKind.BATTERY_QUERY));
  t.true(vectors.commands.some((c) => c.kind === FrameKind.TIME_SET));
  const statuses = new Set(vectors.responses.map((r) => r.fields.status));
  for (const code of Object.values(Status)) t.true(statuses.has(code), `a response with status ${statusName(code)}`);
  t.true(vectors.responses.some((r) => r.fields.kind === 0 && r.fields.key_id === 0 && r.fields.remaining === 0xff && /^0+$/.test(r.command_nonce) && r.fields.status === Status.OK));
  const types = new Set(vectors.link_frames.map((l) => l.type));
  for (const type of Object.values(LinkType)) t.true(types.has(type), `a link frame of type ${type}`);
});

test('crc16 vectors, CCITT-FALSE check value 0x29B1', (t) => {
  t.is(vectors.crc16.find((v) => v.name === 'check value')?.crc, '29b1');
  for (const v of vectors.crc16) t.is(crc16(Buffer.from(v.input_ascii, 'ascii')).toString(16).padStart(4, '0'), v.crc, v.name);
});

for (const v of vectors.commands) {
  test(`command vector "${v.name}": sealing the inputs gives the bytes, opening the bytes gives the inputs`, (t) => {
    const key = hex(v.key);
    const nonce = hex(v.nonce);
    let sealed: Buffer;
    switch (v.kind) {
      case FrameKind.ACCESS:
        sealed = sealCommand({ key, nonce, kind: FrameKind.ACCESS, keyId: v.key_id, scope: v.scope, body: accessBodyFromJson(v.body as AccessBodyJson) });
        break;
      case FrameKind.BATTERY_QUERY:
        sealed = sealCommand({ key, nonce, kind: FrameKind.BATTERY_QUERY, keyId: v.key_id, scope: v.scope });
        break;
      default:
        sealed = sealCommand({ key, nonce, kind: FrameKind.TIME_SET, keyId: v.key_id, scope: v.scope, body: { time: (v.body as { time: number }).time } });
    }
    t.is(sealed.toString('hex'), v.bytes);
    const opened = openCommand(hex(v.bytes), key);
    if (!opened.ok) return t.fail(`did not open: ${opened.status}`);
    const kind: number = opened.command.kind;
    t.is(kind, v.kind);
    t.is(opened.command.keyId, v.key_id);
    t.is(opened.command.scope, v.scope);
    t.is(opened.command.nonce.toString('hex'), v.nonce);
    const bodyJson = opened.command.kind === FrameKind.ACCESS ? accessBodyToJson(opened.command.body) : opened.command.body;
    t.deepEqual(bodyJson, v.body);
  });
}

for (const v of vectors.responses) {
  test(`response vector "${v.name}": sealing the fields gives the bytes, parsing and verifying the bytes gives the fields`, (t) => {
    const key = hex(v.box_key);
    const sealed = sealResponseWithCommandNonce(responseFieldsFromJson(v.fields), key, hex(v.command_nonce));
    t.is(sealed.toString('hex'), v.bytes);
    const { version, tag, ...fields } = parseResponse(hex(v.bytes));
    t.is(version, 1);
    t.is(tag.toString('hex'), v.bytes.slice(48));
    t.deepEqual(responseFieldsToJson(fields), v.fields);
    // The AAD takes command bytes 10..21: any command carrying that nonce.
    const command = Buffer.concat([Buffer.alloc(10, 0x01), hex(v.command_nonce), Buffer.alloc(8)]);
    t.true(verifyResponse(hex(v.bytes), key, /^0+$/.test(v.command_nonce) ? null : command));
  });
}

for (const v of vectors.link_frames) {
  test(`link frame vector "${v.name}": encoding gives the bytes, decoding gives type and payload`, (t) => {
    if (!isLinkType(v.type)) return t.fail('unknown type');
    t.is(encodeLinkFrame(v.type, hex(v.payload)).toString('hex'), v.bytes);
    t.true(v.bytes.endsWith('00'));
    const frame = decodeLinkFrame(hex(v.bytes));
    t.is(frame.type, v.type);
    t.is(frame.payload.toString('hex'), v.payload);
  });
}

for (const v of vectors.decisions) {
  test(`decision vector (PROTOCOL.md, checks, step ${v.step}) "${v.name}": ${v.expected.status_name}`, (t) => {
    const config = {
      moduleId: v.config.module_id,
      parkingId: v.config.parking_id,
      direction: v.config.direction,
      parkingKey: hex(v.config.parking_key),
      parkingKeyNext: v.config.parking_key_next === null ? null : hex(v.config.parking_key_next),
      boxKey: hex(v.config.box_key),
      skewSeconds: v.config.skew_seconds,
      minBatteryMv: v.config.min_battery_mv,
    };
    const state: BoxState = {
      boxSeq: v.state.box_seq,
      lastControlSeq: v.state.last_control_seq,
      tries: new Map(v.state.tries.map((e) => [e.key_id, { count: e.count, notAfter: e.not_after }])),
    };
    const conditions = { boxTime: v.conditions.box_time, batteryMv: v.conditions.battery_mv, barrier: v.conditions.barrier as 0, jammed: v.conditions.jammed };
    const decision = decide(config, state, conditions, hex(v.command));
    const status: string | undefined = statusName(decision.status);
    t.is(status, v.expected.status_name);
    t.is(decision.response.toString('hex'), v.expected.response);
    t.true(verifyResponse(decision.response, config.boxKey, hex(v.command)));
  });
}
