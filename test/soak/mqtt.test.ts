// parkbench soak over MQTT, through the real command line, against a
// simulated box in process on a real aedes broker: the barrier seen on the
// retained state topic (each state published as the arm moves).
import test from 'ava';
import { simOnBroker } from '../helpers/conformance-mqtt-sim.js';
import { boxFile } from '../helpers/conformance-fixtures.js';
import { brokerForTest } from '../helpers/broker.js';
import { runCli } from '../helpers/run-cli.js';

test('over MQTT: 30 cycles, each seen OPEN and CLOSED on the state topic; exit 0', async (t) => {
  const broker = await brokerForTest(t);
  const box = await boxFile(t, 5401);
  await simOnBroker(t, box, broker.url, {
    barrierTimings: { openingMs: 20, openHoldMs: 20, closingMs: 20 },
    settings: { batteryMv: 12_000 },
  });
  const result = await runCli([
    'soak',
    '--box',
    box.path,
    '--mqtt',
    broker.url,
    '--username',
    'operator',
    '--password',
    'pw',
    '--cycles',
    '30',
    '--cycle-ms',
    '3000',
    '--limit',
    'cycle_ms.min>=60',
    '--json',
  ]);
  t.is(result.code, 0, result.stdout + result.stderr);
  const json = JSON.parse(result.stdout) as {
    summary: { cycles: number; target: string };
    measurements: { open_ms: { count: number; min: number } };
  };
  t.like(json.summary, { cycles: 30, target: 'mqtt' });
  t.is(json.measurements.open_ms.count, 30);
  t.true(json.measurements.open_ms.min >= 20);
});
