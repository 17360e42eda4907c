// powerDriverFor: one bench file entry in, the driver of its `driver` out,
// with the entry's times; a bench file's entry works through it.
import test from 'ava';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { benchBox, loadBenchFile, type PowerSpec } from '../../lib/bench/bench-file.js';
import { powerDriverFor, powerUnavailable } from '../../lib/power/drivers.js';
import { boxFile } from '../helpers/conformance-fixtures.js';
import { standIns } from './stand-ins.js';

const times = { settleMs: 1_200, offMs: 500, timeoutMs: 3_000 };

test('each driver from its entry: its description and settle time', (t) => {
  const specs: [PowerSpec, string][] = [
    [{ ...times, driver: 'command', on: 'relay on', off: 'relay off' }, 'command (on: relay on; off: relay off)'],
    [{ ...times, driver: 'usbrelay', relay: 'HURTM_1' }, 'usbrelay HURTM_1'],
    [{ ...times, driver: 'uhubctl', hub: '1-1', port: 2 }, 'uhubctl hub 1-1 port 2'],
    [
      { ...times, driver: 'http', url: 'http://10.0.0.50', api: 'shelly', switch: 0 },
      'http shelly http://10.0.0.50 switch 0',
    ],
    [{ ...times, driver: 'prompt' }, 'prompt (the person at the bench)'],
  ];
  for (const [spec, description] of specs) {
    const driver = powerDriverFor(spec, { moduleId: 4242 });
    t.is(driver.description, description);
    t.is(driver.settleMs, 1_200);
    if (spec.driver !== 'prompt') t.is(powerUnavailable(driver), undefined);
  }
});

test("a bench file's usbrelay entry works the relay through the factory", async (t) => {
  const box = await boxFile(t, 4641);
  const path = join(box.directory, 'bench.yaml');
  await writeFile(
    path,
    'boxes:\n  - { module_id: 4641, provisioning: box-4641.json, link: { serial: /dev/ttyUSB0 }, power: { driver: usbrelay, relay: HURTM_2, off_ms: 20 } }\n',
  );
  const entry = benchBox(await loadBenchFile(path), 4641).power;
  if (entry === undefined) throw new Error('no power entry');
  const tools = await standIns(t);
  const driver = powerDriverFor(entry, { moduleId: 4641, env: tools.env });
  await driver.cycle();
  t.deepEqual(await tools.calls(), ['HURTM_2=0', 'HURTM_2=1']);
  t.is(await tools.state('usbrelay'), 'HURTM_1=0\nHURTM_2=1\n');
});
