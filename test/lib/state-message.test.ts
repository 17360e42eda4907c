// The box state message (lib/mqtt-messages.ts parseStateMessage): what the
// gateway publishes for a real box parses (a simulated box's snapshot:
// test/api/operators/stream/routes.test.ts, over MQTT), anything else is refused
// naming the member at fault.
import test from 'ava';
import { Barrier, Direction, Status } from '../../firmware-protocol/index.js';
import { stateFromResponse } from '../../gateway/box-state.js';
import { MessageError, parseStateMessage } from '../../lib/mqtt-messages.js';

test("the gateway's state of a real box parses, fault included", (t) => {
  const state = stateFromResponse(
    {
      status: Status.BARRIER_FAULT,
      kind: 0,
      moduleId: 9101,
      keyId: 0,
      boxSeq: 42,
      boxTime: 1_767_225_600,
      batteryMv: 3650,
      barrier: Barrier.FAULT,
      direction: Direction.ENTRANCE,
      remaining: 0xff,
    },
    new Date(Date.UTC(2026, 0, 1)),
  );
  t.deepEqual(parseStateMessage(JSON.stringify(state)), state);
  t.is(parseStateMessage(JSON.stringify(state)).barrier, 'fault');
});

test('anything else is refused, naming the member', (t) => {
  const good = {
    barrier: 'open',
    battery_mv: 3700,
    box_time: '2026-01-01T00:00:00.000Z',
    box_seq: 1,
    faults: ['jam'],
    updated_at: '2026-01-01T00:00:00.000Z',
  };
  const cases: [string | undefined, unknown][] = [
    [undefined, 'nope'],
    [undefined, [good]],
    ['barrier', { ...good, barrier: 'OPEN' }],
    ['battery_mv', { ...good, battery_mv: 70_000 }],
    ['box_seq', { ...good, box_seq: -1 }],
    ['box_time', { ...good, box_time: 12 }],
    ['updated_at', { ...good, updated_at: 'x'.repeat(41) }],
    ['faults', { ...good, faults: Array.from({ length: 33 }, () => 'jam') }],
  ];
  for (const [field, value] of cases) {
    const error = t.throws(() => parseStateMessage(typeof value === 'string' ? value : JSON.stringify(value)), {
      instanceOf: MessageError,
    });
    t.is(error.field, field, JSON.stringify(value).slice(0, 60));
  }
});
