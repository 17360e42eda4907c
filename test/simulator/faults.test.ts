import test from 'ava';
import { describeFaults, noFaults } from '../../simulator/faults.js';

test('active faults are listed for the published state', (t) => {
  t.deepEqual(describeFaults(noFaults), []);
  t.deepEqual(describeFaults({ dropCommands: 0.25, corruptResponses: 0, delayMs: 100, jammed: true }), [
    'drop_commands=0.25',
    'delay_ms=100',
    'jam',
  ]);
});
