// The checks over the whole run, on hand-made exchanges: each one catches
// the fault it is there for (so a passing run means something).
import test from 'ava';
import { randomBytes } from 'node:crypto';
import {
  Barrier,
  Direction,
  FrameKind,
  REMAINING_NOT_APPLICABLE,
  sealCommand,
  sealResponse,
  Status,
  parseResponse,
  type ResponseFields,
} from '../../firmware-protocol/index.js';
import { expectedFields } from '../../conformance/expectations.js';
import { runChecks } from '../../conformance/run-checks.js';
import type { RecordedExchange } from '../../conformance/suite-context.js';
import type { BoxUnderTest } from '../../conformance/box-under-test.js';

const box: BoxUnderTest = {
  moduleId: 501,
  parkingId: 7,
  direction: Direction.ENTRANCE,
  parkingKey: randomBytes(16),
  boxKey: randomBytes(16),
  skewSeconds: 120,
  issuerKeys: { issuerKey: null, issuerKeyPrevious: null },
};

function query(seq: number): Buffer {
  return sealCommand({ kind: FrameKind.BATTERY_QUERY, key: box.boxKey, keyId: seq, scope: box.moduleId });
}

function answer(
  command: Buffer,
  boxSeq: number,
  overrides: Partial<ResponseFields> = {},
  sealedFor: Buffer = command,
): Buffer {
  const fields: ResponseFields = {
    status: Status.OK,
    kind: FrameKind.BATTERY_QUERY,
    moduleId: box.moduleId,
    keyId: command.readUInt32BE(2),
    boxSeq,
    boxTime: 1_767_225_600,
    batteryMv: 3_900,
    barrier: Barrier.CLOSED,
    direction: Direction.CONTROL,
    remaining: REMAINING_NOT_APPLICABLE,
    ...overrides,
  };
  return sealResponse(fields, box.boxKey, sealedFor);
}

function recorded(caseName: string, command: Buffer, response: Buffer | null, elapsedMs = 5): RecordedExchange {
  return {
    caseName,
    exchange: response === null ? { command, response, error: 'timeout', elapsedMs } : { command, response, elapsedMs },
    expected: expectedFields(box, command, { status: Status.OK }),
    fields: response === null ? null : parseResponse(response),
  };
}

test('a clean run passes every check', (t) => {
  const [a, b] = [query(1), query(2)];
  const checks = runChecks({
    exchanges: [recorded('one', a, answer(a, 10)), recorded('two', b, answer(b, 12))],
    boxKey: box.boxKey,
    answerMs: 100,
    badReports: 0,
  });
  t.is(checks.length, 4);
  t.deepEqual(
    checks.filter((check) => check.result !== 'pass'),
    [],
  );
});

test('each check catches its fault', (t) => {
  const [a, b, c, d, e] = [query(1), query(2), query(3), query(4), query(5)];
  const exchanges = [
    recorded('first', a, answer(a, 10)),
    recorded('seq goes back', b, answer(b, 9)),
    recorded('tag for another command', c, answer(c, 11, {}, a)),
    recorded('slow', d, answer(d, 12), 250),
    recorded('wrong module', e, answer(e, 13, { moduleId: 502 })),
    recorded('silent', query(6), null, 1_100),
  ];
  const checks = runChecks({ exchanges, boxKey: box.boxKey, answerMs: 100, badReports: 1 });
  const byName = new Map(checks.map((check) => [check.name, check]));
  t.is(byName.get('box_seq strictly increasing')?.reason, 'box_seq 9 (seq goes back) after 10 (first)');
  t.is(
    byName.get('every response tag valid and bound to its command')?.reason,
    'tag for another command: the tag does not verify for its command; 1 status report(s) with a tag that does not verify',
  );
  t.is(byName.get('every response tag valid and bound to its command')?.got, '4/5 verify');
  t.is(byName.get('every command answered within 100 ms')?.reason, 'slow: 250 ms; silent: no answer (timeout)');
  t.is(
    byName.get('kind, key_id, module_id, direction, remaining echoed')?.reason,
    'wrong module: module_id 502, expected 501',
  );
  t.true(checks.every((check) => check.result === 'fail'));
});
