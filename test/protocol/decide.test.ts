// The box's decision (docs/protocol.md, the check order): one test per step, each also
// showing that the earlier steps come first, plus the response fields.
import test from 'ava';
import {
  Barrier,
  Direction,
  FrameKind,
  ProtocolError,
  Status,
  decide,
  forgetExpiredTries,
  parseResponse,
  sealRawCommand,
  statusName,
  statusReport,
  verifyResponse,
} from '../../firmware-protocol/index.js';
import {
  HOUR,
  T0,
  access,
  batteryQuery,
  body,
  boxKey,
  conditions,
  config,
  otherKey,
  parkingKey,
  parkingKeyNext,
  state,
  timeSet,
} from '../helpers/protocol-fixtures.js';

const name = (status: number): string => statusName(status) ?? String(status);

test('step 1: an empty frame is MALFORMED, kind and key_id 0, the box direction, zero AAD', (t) => {
  const d = decide(config, state, conditions, Buffer.alloc(0));
  t.is(name(d.status), 'MALFORMED');
  t.is(d.kind, 0);
  t.is(d.keyId, 0);
  t.is(d.fields.direction, Direction.ENTRANCE);
  t.is(d.remaining, 0xff);
  t.true(verifyResponse(d.response, boxKey, null));
});

test('step 1: a version byte other than 0x01 is UNSUPPORTED_VERSION (before the length check of step 2)', (t) => {
  t.is(name(decide(config, state, conditions, Buffer.from([0x02])).status), 'UNSUPPORTED_VERSION');
  const frame = access();
  frame[0] = 0x00;
  const d = decide(config, state, conditions, frame);
  t.is(name(d.status), 'UNSUPPORTED_VERSION');
  t.is(d.kind, 0);
  t.is(d.keyId, 0);
  // The AAD still takes bytes 10..21 of the command as received, whatever its version.
  t.true(verifyResponse(d.response, boxKey, frame));
  t.false(verifyResponse(d.response, boxKey, null));
});

test('step 2: fewer than 30 bytes, or an unknown kind, is MALFORMED with kind and key_id 0', (t) => {
  const frame = access();
  const short = decide(config, state, conditions, frame.subarray(0, 29));
  t.is(name(short.status), 'MALFORMED');
  t.is(short.keyId, 0);
  t.true(verifyResponse(short.response, boxKey, frame.subarray(0, 29)));
  t.true(
    verifyResponse(decide(config, state, conditions, frame.subarray(0, 21)).response, boxKey, null),
    'under 22 bytes: zero AAD',
  );
  for (const kind of [0x00, 0x04, 0x07, 0xff]) {
    const bad = Buffer.from(frame);
    bad[1] = kind;
    const d = decide(config, state, conditions, bad);
    t.is(name(d.status), 'MALFORMED');
    t.is(d.kind, 0);
  }
});

test('step 2 vs 4: a frame of 30 bytes or more that was cut short fails the tag (AUTH_FAILED), echoing kind and key_id', (t) => {
  const frame = access();
  const d = decide(config, state, conditions, frame.subarray(0, 30));
  t.is(name(d.status), 'AUTH_FAILED');
  t.is(d.kind, FrameKind.ACCESS);
  t.is(d.keyId, 42);
});

test('step 3: ACCESS scoped to another parking is WRONG_PARKING, before the tag is checked', (t) => {
  const d = decide(config, state, conditions, access({ scope: 8, key: otherKey }));
  t.is(name(d.status), 'WRONG_PARKING');
  t.is(d.remaining, 0xff);
  t.is(d.command, null);
});

test('step 3: a control command scoped to another module is WRONG_MODULE, direction 0', (t) => {
  const d = decide(config, state, conditions, timeSet(6, { scope: 102, key: otherKey }));
  t.is(name(d.status), 'WRONG_MODULE');
  t.is(d.fields.direction, Direction.CONTROL);
  t.is(d.kind, FrameKind.TIME_SET);
  t.is(d.keyId, 6);
  t.is(name(decide(config, state, conditions, batteryQuery(6, { scope: 100 })).status), 'WRONG_MODULE');
});

test('step 4: a tag that does not verify is AUTH_FAILED (ACCESS under K_box, control under K_park, any flipped tag bit)', (t) => {
  t.is(name(decide(config, state, conditions, access({ key: boxKey })).status), 'AUTH_FAILED');
  t.is(name(decide(config, state, conditions, timeSet(6, { key: parkingKey })).status), 'AUTH_FAILED');
  const frame = access();
  frame[frame.length - 1] = (frame[frame.length - 1] ?? 0) ^ 0x01;
  const d = decide(config, state, conditions, frame);
  t.is(name(d.status), 'AUTH_FAILED');
  t.is(d.remaining, 0xff);
});

test('step 4: ACCESS opens under parking_key, then parking_key_next; without it the next key fails', (t) => {
  const rotated = { ...config, parkingKeyNext };
  t.is(name(decide(rotated, state, conditions, access({ key: parkingKeyNext })).status), 'OK');
  t.is(name(decide(rotated, state, conditions, access()).status), 'OK');
  t.is(name(decide(config, state, conditions, access({ key: parkingKeyNext })).status), 'AUTH_FAILED');
});

test('step 5: a body of the wrong length is MALFORMED after the tag verified (echoes kind and key_id)', (t) => {
  const plain = (hex: string): Buffer => Buffer.from(hex, 'hex');
  const cases: [number, Buffer][] = [
    [FrameKind.ACCESS, plain('6955b9006955d52001010000000065')], // module_count 0
    [FrameKind.ACCESS, plain('6955b9006955d520010121')], // module_count 33, no ids
    [FrameKind.ACCESS, plain('6955b9006955d5200101020000006500')], // count 2, 1.25 ids
    [FrameKind.ACCESS, plain('6955b9006955d5')], // shorter than 11
    [FrameKind.BATTERY_QUERY, plain('00')],
    [FrameKind.TIME_SET, plain('6955b9')],
    [FrameKind.TIME_SET, plain('6955b90000')],
  ];
  for (const [kind, plaintext] of cases) {
    const key = kind === FrameKind.ACCESS ? parkingKey : boxKey;
    const scope = kind === FrameKind.ACCESS ? 7 : 101;
    const d = decide(config, state, conditions, sealRawCommand({ key, kind, keyId: 9, scope, plaintext }));
    t.is(name(d.status), 'MALFORMED', plaintext.toString('hex'));
    t.is(d.kind, kind);
    t.is(d.keyId, 9);
    t.is(d.remaining, 0xff);
  }
});

test('step 6: a control sequence not greater than the last accepted is REPLAY; accepted ones move it', (t) => {
  t.is(name(decide(config, state, conditions, timeSet(5)).status), 'REPLAY');
  t.is(name(decide(config, state, conditions, batteryQuery(4)).status), 'REPLAY');
  const ok = decide(config, state, conditions, batteryQuery(9));
  t.is(name(ok.status), 'OK');
  t.is(ok.state.lastControlSeq, 9);
  t.is(ok.fields.direction, Direction.CONTROL);
  t.is(ok.remaining, 0xff);
  t.deepEqual(ok.effect, { type: 'none' });
  t.is(name(decide(config, ok.state, conditions, timeSet(9)).status), 'REPLAY');
  t.is(name(decide(config, ok.state, conditions, timeSet(10)).status), 'OK');
});

test('step 6: TIME_SET sets the clock first (the response carries the new time); battery and barrier do not refuse it', (t) => {
  const d = decide(
    config,
    state,
    { ...conditions, batteryMv: 2000, jammed: true },
    timeSet(6, { time: T0 + 5 * HOUR }),
  );
  t.is(name(d.status), 'OK');
  t.is(d.fields.boxTime, T0 + 5 * HOUR);
  t.deepEqual(d.effect, { type: 'setTime', time: T0 + 5 * HOUR });
  t.is(parseResponse(d.response).boxTime, T0 + 5 * HOUR);
  t.false(verifyResponse(d.response, boxKey, timeSet(6)), 'bound to its own command');
});

test('step 7: outside not_before − skew .. not_after + skew is NOT_YET_VALID or EXPIRED; the bounds are inclusive', (t) => {
  const at = (boxTime: number, extra = {}): string =>
    name(decide(config, state, { ...conditions, boxTime, ...extra }, access()).status);
  t.is(at(T0 - 121), 'NOT_YET_VALID');
  t.is(at(T0 - 120), 'OK');
  t.is(at(T0 + 2 * HOUR + 120), 'OK');
  t.is(at(T0 + 2 * HOUR + 121), 'EXPIRED');
  t.is(at(T0 + 2 * HOUR + 121, { batteryMv: 0, jammed: true }), 'EXPIRED');
  t.is(
    name(decide({ ...config, skewSeconds: undefined }, state, { ...conditions, boxTime: T0 - 120 }, access()).status),
    'OK',
    'default skew 120',
  );
  t.is(
    name(decide({ ...config, skewSeconds: 0 }, state, { ...conditions, boxTime: T0 - 1 }, access()).status),
    'NOT_YET_VALID',
  );
  const d = decide(config, state, { ...conditions, boxTime: T0 - 121 }, access());
  t.is(d.remaining, 2, 'remaining shows the unchanged count');
  t.is(d.state.tries, state.tries, 'no try counted');
});

test('step 8: a module list without this box is WRONG_MODULE (after the validity window)', (t) => {
  const d = decide(config, state, conditions, access({ body: { moduleIds: [102, 103] } }));
  t.is(name(d.status), 'WRONG_MODULE');
  t.is(d.remaining, 2);
  t.is(d.fields.direction, Direction.ENTRANCE);
  t.is(
    name(decide(config, state, { ...conditions, boxTime: T0 - 1000 }, access({ body: { moduleIds: [102] } })).status),
    'NOT_YET_VALID',
  );
});

test('step 9: tries are counted per key_id in this box direction; at the maximum NO_TRIES_LEFT with remaining 0', (t) => {
  const first = decide(config, state, conditions, access());
  t.is(name(first.status), 'OK');
  t.is(first.remaining, 1);
  const second = decide(config, first.state, conditions, access());
  t.is(second.remaining, 0);
  const third = decide(config, second.state, { ...conditions, batteryMv: 0 }, access());
  t.is(name(third.status), 'NO_TRIES_LEFT', 'before the battery check');
  t.is(third.remaining, 0);
  t.is(third.state.tries.get(42)?.count, 2);
  t.is(
    name(decide(config, second.state, conditions, access({ keyId: 43 })).status),
    'OK',
    'another key has its own count',
  );
  const exitBox = { ...config, direction: 'exit' as const };
  const out = decide(exitBox, state, conditions, access());
  t.is(out.remaining, 0, 'exit box uses max_exits (1)');
  t.is(out.fields.direction, Direction.EXIT);
  t.is(name(decide(exitBox, out.state, conditions, access()).status), 'NO_TRIES_LEFT');
  t.is(name(decide(config, state, conditions, access({ body: { maxEntries: 0 } })).status), 'NO_TRIES_LEFT');
});

test('step 10: a battery below the minimum is LOW_BATTERY, and the try counts', (t) => {
  const d = decide(config, state, { ...conditions, batteryMv: 3299, jammed: true }, access());
  t.is(name(d.status), 'LOW_BATTERY');
  t.is(d.remaining, 1);
  t.is(d.state.tries.get(42)?.count, 1);
  t.deepEqual(d.effect, { type: 'none' });
  t.is(
    name(decide(config, state, { ...conditions, batteryMv: 3300 }, access()).status),
    'OK',
    'the minimum itself is enough',
  );
});

test('step 11: a jammed barrier is BARRIER_FAULT (barrier FAULT, try counted); otherwise OK and the barrier opens', (t) => {
  const jam = decide(config, state, { ...conditions, jammed: true }, access());
  t.is(name(jam.status), 'BARRIER_FAULT');
  t.is(jam.fields.barrier, Barrier.FAULT);
  t.is(jam.remaining, 1);
  t.deepEqual(jam.effect, { type: 'fault' });
  const ok = decide(config, state, conditions, access());
  t.is(ok.status, Status.OK);
  t.is(ok.fields.barrier, Barrier.OPENING);
  t.deepEqual(ok.effect, { type: 'open' });
  t.is(decide(config, state, { ...conditions, barrier: Barrier.OPEN }, access()).fields.barrier, Barrier.OPEN);
  t.not(ok.command, null);
});

test('every response: box_seq goes up by one, fields match the frame, the tag binds the command, the input state is untouched', (t) => {
  const frozen = { ...state, tries: new Map(state.tries) };
  const command = access();
  const d = decide(config, frozen, conditions, command);
  t.is(d.fields.boxSeq, 11);
  t.is(d.state.boxSeq, 11);
  t.is(frozen.boxSeq, 10);
  t.is(frozen.tries.size, 0);
  const { version, tag, ...fields } = parseResponse(d.response);
  t.is(version, 1);
  t.is(tag.length, 8);
  t.deepEqual(fields, d.fields);
  t.true(verifyResponse(d.response, boxKey, command));
  t.false(verifyResponse(d.response, boxKey, access()), 'another command (another nonce) does not verify');
  t.deepEqual(decide(config, frozen, conditions, command).response, d.response, 'deterministic: no randomness');
  t.is(d.fields.moduleId, 101);
  t.is(d.fields.batteryMv, 3700);
});

test('statusReport: OK, kind 0, key_id 0, remaining 0xFF, the box direction, next box_seq, zero AAD', (t) => {
  const report = statusReport(config, state, conditions);
  t.like(report.fields, {
    status: Status.OK,
    kind: 0,
    keyId: 0,
    remaining: 0xff,
    direction: Direction.ENTRANCE,
    boxSeq: 11,
    moduleId: 101,
  });
  t.is(report.state.boxSeq, 11);
  t.is(report.state.tries, state.tries);
  t.true(verifyResponse(report.response, boxKey, null));
  t.true(verifyResponse(report.response, boxKey, Buffer.alloc(21, 7)), 'a command under 22 bytes also means zero AAD');
});

test('forgetExpiredTries drops keys past not_after + skew and nothing else', (t) => {
  const tries = new Map([
    [1, { count: 1, notAfter: T0 }],
    [2, { count: 1, notAfter: T0 + HOUR }],
  ]);
  const before = { ...state, tries };
  t.is(forgetExpiredTries(config, before, T0 + 120), before);
  const after = forgetExpiredTries(config, before, T0 + 121);
  t.deepEqual([...after.tries.keys()], [2]);
  t.is(tries.size, 2);
  t.is(body.maxEntries, 2);
});

test('box_seq cannot pass 0xFFFFFFFF: decide and statusReport refuse with a typed error instead of wrapping', (t) => {
  const last = { ...state, boxSeq: 0xfffffffe };
  t.is(decide(config, last, conditions, access()).fields.boxSeq, 0xffffffff);
  const exhausted = { ...state, boxSeq: 0xffffffff };
  t.throws(() => decide(config, exhausted, conditions, access()), { instanceOf: ProtocolError, message: /box_seq/ });
  t.throws(() => statusReport(config, exhausted, conditions), { instanceOf: ProtocolError });
});
