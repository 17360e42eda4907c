// The bench file as lib/bench/bench-file.ts loads it: every key read, and
// every bad file refused with one line naming the file, the line and the
// key (ajv's schema errors and the checks after it), never a stack.
import test from 'ava';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  BenchFileError,
  benchBox,
  loadBenchFile,
  mqttPassword,
  POWER_DEFAULTS,
  powerPassword,
} from '../../lib/bench/bench-file.js';
import { boxFile } from '../helpers/conformance-fixtures.js';

/** A bench file beside a provisioning file of box 4242 (box-4242.json). */
async function benchFile(t: Parameters<typeof boxFile>[0], yaml: string): Promise<string> {
  const box = await boxFile(t, 4242);
  const path = join(box.directory, 'bench.yaml');
  await writeFile(path, yaml);
  return path;
}

const GOOD = `# the bench by the window
boxes:
  - module_id: 4242
    provisioning: box-4242.json          # relative to this file
    link: { serial: /dev/ttyUSB0, baud: 115200 }
    power:
      driver: command
      on: usbrelay HURTM_1=1
      off: usbrelay HURTM_1=0
      settle_ms: 2000
    labels: { firmware: 1.4.2, hardware: rev-C, rev: 3 }
    limits: ['answer_ms.p99<=250', 'timeouts<=0']
`;

/** The error line of loading `yaml`, with the file's folder replaced by DIR. */
async function errorOf(t: Parameters<typeof boxFile>[0], yaml: string): Promise<string> {
  const path = await benchFile(t, yaml);
  const error = await t.throwsAsync(loadBenchFile(path), { instanceOf: BenchFileError });
  const message = error.message;
  t.false(message.includes('\n'), message);
  return message.replaceAll(join(path, '..'), 'DIR');
}

test('a bench file: every key read, the provisioning file relative to it, defaults filled in', async (t) => {
  const path = await benchFile(t, GOOD);
  const bench = await loadBenchFile(path);
  t.is(bench.boxes.length, 1);
  const box = benchBox(bench, undefined);
  t.is(box.moduleId, 4242);
  t.is(box.provisioning.moduleId, 4242);
  t.is(box.provisioningPath, join(path, '..', 'box-4242.json'));
  t.deepEqual(box.link, { kind: 'serial', target: { path: '/dev/ttyUSB0', baudRate: 115200 } });
  t.deepEqual(box.power, {
    driver: 'command',
    on: 'usbrelay HURTM_1=1',
    off: 'usbrelay HURTM_1=0',
    settleMs: 2000,
    offMs: POWER_DEFAULTS.offMs,
    timeoutMs: POWER_DEFAULTS.timeoutMs,
  });
  t.deepEqual(box.labels, { firmware: '1.4.2', hardware: 'rev-C', rev: '3' });
  t.deepEqual(box.limits, ['answer_ms.p99<=250', 'timeouts<=0']);
  t.is(benchBox(bench, 4242), box);
  t.throws(() => benchBox(bench, 9), { message: /^.*bench\.yaml: no box 9 \(it holds 4242\)$/ });
});

test('every driver and link form loads', async (t) => {
  const path = await benchFile(
    t,
    `boxes:
  - module_id: 4242
    provisioning: box-4242.json
    link: { mqtt: "mqtt://10.0.0.2:1883", username: op-bench, password_env: PB_TEST_PW, topic_prefix: lab }
    power: { driver: http, url: "http://10.0.0.50", api: tasmota, switch: 2, timeout_ms: 3000, password_env: PB_PLUG_PW }
`,
  );
  const box = benchBox(await loadBenchFile(path), 4242);
  t.is(powerPassword(box.power, { PB_PLUG_PW: 'joker' }), 'joker');
  t.throws(() => powerPassword(box.power, {}), {
    message:
      /bench\.yaml:5: boxes\[0\]\.power\.password_env: the environment variable PB_PLUG_PW is not set \(the plug's web password\)$/,
  });
  t.deepEqual(box.link, {
    kind: 'mqtt',
    url: 'mqtt://10.0.0.2:1883',
    username: 'op-bench',
    passwordEnv: 'PB_TEST_PW',
    topicPrefix: 'lab',
  });
  t.like(box.power, { driver: 'http', url: 'http://10.0.0.50', api: 'tasmota', switch: 2, timeoutMs: 3000 });
  t.is(mqttPassword(box, { PB_TEST_PW: 's3cret' }), 's3cret');
  // The password is read from the environment when the box is used, and its absence named there.
  t.throws(() => mqttPassword(box, {}), {
    message: /bench\.yaml:4: boxes\[0\]\.link\.password_env: the environment variable PB_TEST_PW is not set/,
  });
  for (const [power, driver] of [
    ['{ driver: usbrelay, relay: HURTM_1 }', { driver: 'usbrelay', relay: 'HURTM_1' }],
    [
      '{ driver: uhubctl, hub: 1-1.4, port: 2, off_ms: 3000 }',
      { driver: 'uhubctl', hub: '1-1.4', port: 2, offMs: 3000 },
    ],
    ['{ driver: prompt, settle_ms: 500 }', { driver: 'prompt', settleMs: 500 }],
  ] as const) {
    const other = await benchFile(
      t,
      `boxes:\n  - { module_id: 4242, provisioning: box-4242.json, link: { ble: "00:07:80:aa:bb:01" }, power: ${power} }\n`,
    );
    const loaded = benchBox(await loadBenchFile(other), 4242);
    t.like(loaded.power, driver);
    t.deepEqual(loaded.link, { kind: 'ble', mac: '00:07:80:AA:BB:01' });
  }
});

test('a wrong key: one line naming its line and where it is, and the keys known there', async (t) => {
  t.is(
    await errorOf(t, GOOD.replace('    link:', '    lnk:')),
    'DIR/bench.yaml:5: boxes[0].lnk: unknown key (known here: module_id, provisioning, link, power, labels, limits)',
  );
  t.is(
    await errorOf(t, GOOD.replace('settle_ms: 2000', 'settle_ms: 2000\n      relay: HURTM_1')),
    'DIR/bench.yaml:11: boxes[0].power.relay: unknown key (known here: driver, settle_ms, off_ms, timeout_ms, on, off, cycle)',
  );
  t.is(await errorOf(t, 'boxs: []\n'), 'DIR/bench.yaml:1: boxs: unknown key (known here: boxes)');
  t.is(
    await errorOf(t, GOOD.replace('      on: usbrelay HURTM_1=1\n', '')),
    'DIR/bench.yaml:7: boxes[0].power: missing on',
  );
  t.is(
    await errorOf(t, GOOD.replace('settle_ms: 2000', 'settle_ms: soon')),
    'DIR/bench.yaml:10: boxes[0].power.settle_ms: must be integer, got "soon"',
  );
});

test('a missing provisioning file, or one of another box: the provisioning key named', async (t) => {
  t.is(
    await errorOf(t, GOOD.replace('box-4242.json', 'box-9999.json')),
    'DIR/bench.yaml:4: boxes[0].provisioning: DIR/box-9999.json: no such file',
  );
  t.is(
    await errorOf(t, GOOD.replace('module_id: 4242', 'module_id: 4243')),
    'DIR/bench.yaml:3: boxes[0].module_id: 4243 is not the module_id of box-4242.json (4242)',
  );
  const path = await benchFile(t, GOOD);
  await t.throwsAsync(loadBenchFile(join(path, '..', 'none.yaml')), {
    message: /none\.yaml: cannot read the bench file: no such file$/,
  });
});

test('a bad link: none, two, a bad MAC address or broker URL, a key of another link', async (t) => {
  const link = (text: string) => GOOD.replace('{ serial: /dev/ttyUSB0, baud: 115200 }', text);
  t.is(await errorOf(t, link('{}')), 'DIR/bench.yaml:5: boxes[0].link: give exactly one of serial, ble or mqtt');
  t.is(
    await errorOf(t, link('{ serial: /dev/ttyUSB0, ble: "00:07:80:AA:BB:01" }')),
    'DIR/bench.yaml:5: boxes[0].link: give exactly one of serial, ble or mqtt (got serial, ble)',
  );
  t.is(
    await errorOf(t, link('{ ble: "00:07:80" }')),
    'DIR/bench.yaml:5: boxes[0].link.ble: must be a MAC address like AA:BB:CC:DD:EE:FF, got "00:07:80"',
  );
  t.is(
    await errorOf(t, link('{ mqtt: "http://broker" }')),
    'DIR/bench.yaml:5: boxes[0].link.mqtt: must be a broker URL (mqtt://host:port), got "http://broker"',
  );
  t.is(
    await errorOf(t, link('{ ble: "00:07:80:AA:BB:01", baud: 9600 }')),
    'DIR/bench.yaml:5: boxes[0].link.baud: goes with serial, not ble',
  );
  t.is(
    await errorOf(t, link('{ serial: /dev/ttyUSB0, usb: 1 }')),
    'DIR/bench.yaml:5: boxes[0].link.usb: unknown key (known here: serial, baud, ble, mqtt, username, password_env, topic_prefix)',
  );
});

test('a bad driver, or a bad value of one: the key named', async (t) => {
  t.is(
    await errorOf(t, GOOD.replace('driver: command', 'driver: relay9')),
    'DIR/bench.yaml:7: boxes[0].power.driver: unknown driver "relay9" (command, usbrelay, uhubctl, http or prompt)',
  );
  const power = (text: string) => GOOD.replace(/ {4}power:\n(?: {6}.*\n)+/, `    power: ${text}\n`);
  t.is(
    await errorOf(t, power('{ driver: http, url: "ftp://10.0.0.50", api: shelly }')),
    'DIR/bench.yaml:6: boxes[0].power.url: must be an http:// or https:// URL, got "ftp://10.0.0.50"',
  );
  t.is(
    await errorOf(t, power('{ driver: http, url: "http://10.0.0.50", api: kasa }')),
    'DIR/bench.yaml:6: boxes[0].power.api: must be one of shelly, tasmota, got "kasa"',
  );
  t.is(
    await errorOf(t, power('{ driver: usbrelay, relay: "HURTM_1; rm -rf /" }')),
    `DIR/bench.yaml:6: boxes[0].power.relay: must be a relay as usbrelay lists it, the board's serial and the relay's number (HURTM_1), got "HURTM_1; rm -rf /"`,
  );
  t.is(await errorOf(t, power('{ driver: uhubctl, hub: 1-1 }')), 'DIR/bench.yaml:6: boxes[0].power: missing port');
  t.is(
    await errorOf(t, power('{ on: "x", off: "y" }')),
    'DIR/bench.yaml:6: boxes[0].power: missing driver (command, usbrelay, uhubctl, http or prompt)',
  );
});

test('a YAML syntax error: one line with its line and column', async (t) => {
  t.regex(
    await errorOf(t, GOOD.replace('labels: { firmware: 1.4.2', 'labels: { firmware: [1.4.2')),
    /^DIR\/bench\.yaml:11:\d+: \S.*$/,
  );
  t.regex(await errorOf(t, GOOD + 'boxes: []\n'), /^DIR\/bench\.yaml:13:1: Map keys must be unique/);
});

test('a password in the file is refused, naming the key; secrets come from the environment', async (t) => {
  t.is(
    await errorOf(
      t,
      GOOD.replace(
        '{ serial: /dev/ttyUSB0, baud: 115200 }',
        '{ mqtt: "mqtt://h:1883", username: u, password: hunter2 }',
      ),
    ),
    'DIR/bench.yaml:5: boxes[0].link.password: no password in the bench file: put it in an environment variable and name that with password_env',
  );
  t.is(
    await errorOf(
      t,
      GOOD.replace(
        / {4}power:\n(?: {6}.*\n)+/,
        '    power: { driver: http, url: "http://10.0.0.50", api: shelly, password: hunter2 }\n',
      ),
    ),
    'DIR/bench.yaml:6: boxes[0].power.password: no password in the bench file: put it in an environment variable and name that with password_env',
  );
  t.is(
    await errorOf(
      t,
      GOOD.replace('{ serial: /dev/ttyUSB0, baud: 115200 }', '{ mqtt: "mqtt://h:1883", password_env: "1x" }'),
    ),
    'DIR/bench.yaml:5: boxes[0].link.password_env: must be the name of an environment variable (letters, digits, underscores), got "1x"',
  );
});

test('limits are strings; a box twice, or two boxes on one port, are refused', async (t) => {
  t.is(
    await errorOf(t, GOOD.replace("limits: ['answer_ms.p99<=250', 'timeouts<=0']", 'limits: [250]')),
    'DIR/bench.yaml:12: boxes[0].limits[0]: must be string, got 250',
  );
  const twice = `${GOOD}  - { module_id: 4242, provisioning: box-4242.json, link: { serial: /dev/ttyUSB1 } }\n`;
  t.is(
    await errorOf(t, twice),
    'DIR/bench.yaml:13: boxes[1].module_id: box 4242 is on the bench twice (DIR/bench.yaml:3: boxes[0])',
  );
});

test('a relative serial path is resolved against the bench file, so two spellings of one port are one port', async (t) => {
  const first = await boxFile(t, 4242);
  const second = await boxFile(t, 4243);
  await writeFile(join(first.directory, 'box-4243.json'), JSON.stringify(second.document));
  const path = join(first.directory, 'bench.yaml');
  const bench = (secondLink: string) => `boxes:
  - { module_id: 4242, provisioning: box-4242.json, link: { serial: ttyA } }
  - { module_id: 4243, provisioning: box-4243.json, link: ${secondLink} }
`;
  await writeFile(path, bench('{ serial: /dev/ttyUSB0 }'));
  const loaded = await loadBenchFile(path);
  t.deepEqual(
    loaded.boxes.map((box) => (box.link.kind === 'serial' ? box.link.target.path : '')),
    [join(first.directory, 'ttyA'), '/dev/ttyUSB0'],
  );
  await writeFile(path, bench('{ serial: ./sub/../ttyA }'));
  const error = await t.throwsAsync(loadBenchFile(path), { instanceOf: BenchFileError });
  t.is(
    error.message.replaceAll(first.directory, 'DIR'),
    "DIR/bench.yaml:3: boxes[1].link.serial: DIR/ttyA is also box 4242's port",
  );
});
