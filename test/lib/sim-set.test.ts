import test from 'ava';
import { parseSimSet, SimSetError } from '../../lib/sim-set.js';

test('every sim/set field parses into the command', (t) => {
  const command = parseSimSet({
    drop_commands: 0.5,
    corrupt_responses: 0.1,
    delay_ms: 250,
    jam: true,
    battery_mv: 3_100,
    clock_offset_seconds: -300,
    drift_ppm: 40,
    offline_seconds: 30,
    car_passed: true,
  });
  t.deepEqual(command, {
    faults: { dropCommands: 0.5, corruptResponses: 0.1, delayMs: 250, jammed: true },
    batteryMv: 3_100,
    clockOffsetSeconds: -300,
    driftPpm: 40,
    offlineSeconds: 30,
    carPassed: true,
  });
});

test('an empty object changes nothing', (t) => {
  t.deepEqual(parseSimSet({}), {});
});

for (const [payload, message] of [
  [null, 'sim/set: must be a JSON object'],
  [[1], 'sim/set: must be a JSON object'],
  [{ drop_commands: 2 }, 'drop_commands: must be a number from 0 to 1'],
  [{ delay_ms: '5' }, 'delay_ms: must be a number from 0 to 600000'],
  [{ jam: 1 }, 'jam: must be true or false'],
  [{ battery_mv: 70_000 }, 'battery_mv: must be a number from 0 to 65535'],
  [{ jamm: true }, /^jamm: unknown setting \(known: drop_commands, /],
  // A name every object inherits is no setting either.
  [{ toString: 1 }, /^toString: unknown setting \(known: drop_commands, /],
  [JSON.parse('{"__proto__": {"jam": true}}') as object, /^__proto__: unknown setting \(known: drop_commands, /],
] as const) {
  test(`sim/set ${JSON.stringify(payload)} is refused with the field named`, (t) => {
    const error = t.throws(() => parseSimSet(payload), { instanceOf: SimSetError });
    if (typeof message === 'string') t.is(error.message, message);
    else t.regex(error.message, message);
  });
}
