import test from 'ava';
import { randomBytes } from 'node:crypto';
import { FakeClock } from '../../lib/fake-clock.js';
import {
  Barrier,
  Direction,
  FrameKind,
  sealCommand,
  sealResponse,
  Status,
  type ResponseFields,
} from '../../firmware-protocol/index.js';
import { expectedEcho, isStatusReport, ResponseWaiter } from '../../lib/response-waiter.js';

const boxKey = randomBytes(16);
const parkingKey = randomBytes(16);

function command(keyId: number): Buffer {
  return sealCommand({
    kind: FrameKind.ACCESS,
    key: parkingKey,
    keyId,
    scope: 7,
    body: { notBefore: 0, notAfter: 10, maxEntries: 1, maxExits: 1, moduleIds: [5] },
  });
}

function response(fields: Partial<ResponseFields>, answered: Buffer | null): Buffer {
  const all: ResponseFields = {
    status: Status.OK,
    kind: FrameKind.ACCESS,
    moduleId: 5,
    keyId: 1,
    boxSeq: 1,
    boxTime: 1,
    batteryMv: 3_700,
    barrier: Barrier.OPENING,
    direction: Direction.ENTRANCE,
    remaining: 0,
    ...fields,
  };
  return sealResponse(all, boxKey, answered);
}

test('a response answers the oldest pending command with its kind and key_id', async (t) => {
  const waiter = new ResponseWaiter(new FakeClock());
  const first = waiter.expect(command(1), 1_000);
  const second = waiter.expect(command(2), 1_000);
  const forSecond = response({ keyId: 2 }, command(2));
  t.true(waiter.offer(forSecond));
  t.deepEqual(await second, { response: forSecond });
  t.is(waiter.pending, 1);
  t.false(waiter.offer(response({ keyId: 3 }, null)), 'an answer to nothing pending is refused');
  waiter.failAll();
  t.deepEqual(await first, { error: 'link_down' });
});

test('no answer within the time gives a timeout, on the injected clock', async (t) => {
  const clock = new FakeClock();
  const waiter = new ResponseWaiter(clock);
  const outcome = waiter.expect(command(1), 2_000);
  clock.advance(1_999);
  t.is(waiter.pending, 1);
  clock.advance(1);
  t.deepEqual(await outcome, { error: 'timeout' });
  t.false(waiter.offer(response({ keyId: 1 }, command(1))), 'a late answer matches nothing');
});

test('a command the box cannot parse is answered with kind 0 and key_id 0', (t) => {
  t.deepEqual(expectedEcho(Buffer.from([1, 9])), { kind: 0, keyId: 0 });
  t.deepEqual(expectedEcho(command(42)), { kind: FrameKind.ACCESS, keyId: 42 });
  const waiter = new ResponseWaiter(new FakeClock());
  void waiter.expect(Buffer.from([2]), 1_000);
  t.true(
    waiter.offer(
      response({ status: Status.UNSUPPORTED_VERSION, kind: 0, keyId: 0, remaining: 0xff }, Buffer.from([2])),
    ),
  );
});

test('status reports are told apart from responses', (t) => {
  t.true(
    isStatusReport({
      status: Status.OK,
      kind: 0,
      moduleId: 5,
      keyId: 0,
      boxSeq: 1,
      boxTime: 1,
      batteryMv: 1,
      barrier: Barrier.CLOSED,
      direction: Direction.ENTRANCE,
      remaining: 0xff,
    }),
  );
  t.false(
    isStatusReport({
      status: Status.MALFORMED,
      kind: 0,
      moduleId: 5,
      keyId: 0,
      boxSeq: 1,
      boxTime: 1,
      batteryMv: 1,
      barrier: Barrier.CLOSED,
      direction: Direction.ENTRANCE,
      remaining: 0xff,
    }),
  );
});
