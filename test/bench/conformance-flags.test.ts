// `parkbench conformance --bench FILE`: with it, --box is the module_id of a
// box of the file (a bench of one box may leave it out); without it, --box
// is still the provisioning file. The file gives the link and the power
// switch, a link flag overrides the file's (--topic-prefix too), an MQTT password comes from the
// environment. Checked in process (fast), and a bad bench file through the
// real entry point: one line, exit 2.
import test, { type ExecutionContext } from 'ava';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { UsageError } from '../../cli/errors.js';
import { parseConformanceFlags } from '../../cli/conformance/flags.js';
import { boxFile } from '../helpers/conformance-fixtures.js';
import { runCli } from '../helpers/run-cli.js';

const defaults = {
  answerMs: '2000',
  cycleMs: '30000',
  waitMs: '10000',
  heldRevocations: '0',
  logLevel: 'warn',
  protocol: '2',
} as const;

const TWO_BOXES = `boxes:
  - module_id: 4601
    provisioning: box-4601.json
    link: { serial: /dev/ttyUSB0, baud: 57600 }
    power: { driver: command, on: "echo on", off: "echo off", settle_ms: 1500 }
  - module_id: 4602
    provisioning: box-4602.json
    link: { mqtt: "mqtt://10.0.0.2:1883", username: op-bench, password_env: PB_BENCH_TEST_PW, topic_prefix: lab }
`;

async function bench(t: ExecutionContext, yaml: string): Promise<string> {
  const first = await boxFile(t, 4601);
  const second = await boxFile(t, 4602);
  await writeFile(join(first.directory, 'box-4602.json'), JSON.stringify(second.document));
  const path = join(first.directory, 'bench.yaml');
  await writeFile(path, yaml);
  return path;
}

test('with --bench, --box is a module_id of the file; the link and the power switch come from it', async (t) => {
  const path = await bench(t, TWO_BOXES);
  const options = await parseConformanceFlags({ ...defaults, bench: path, box: '4601' }, 0);
  t.is(options.provisioning.moduleId, 4601);
  t.deepEqual(options.choice, { kind: 'serial', target: { path: '/dev/ttyUSB0', baudRate: 57600 } });
  t.like(options.power, { driver: 'command', on: 'echo on', off: 'echo off', settleMs: 1500 });
  // A link flag overrides the file's link; the box and its switch stay the file's.
  const overridden = await parseConformanceFlags({ ...defaults, bench: path, box: '4601', serial: '/tmp/ttyB' }, 0);
  t.deepEqual(overridden.choice, { kind: 'serial', target: { path: '/tmp/ttyB', baudRate: 115200 } });
  t.like(overridden.power, { driver: 'command' });
});

test("an MQTT box of the bench: its password from the environment variable the file names, the flags' first", async (t) => {
  const path = await bench(t, TWO_BOXES);
  process.env.PB_BENCH_TEST_PW = 'from-env';
  t.teardown(() => {
    delete process.env.PB_BENCH_TEST_PW;
  });
  const options = await parseConformanceFlags({ ...defaults, bench: path, box: '4602' }, 0);
  t.like(options.choice, { kind: 'mqtt', url: 'mqtt://10.0.0.2:1883', username: 'op-bench', password: 'from-env' });
  t.is(options.choice.kind === 'mqtt' ? options.choice.topics.prefix : '', 'lab');
  t.is(options.power, undefined);
  const flagged = await parseConformanceFlags(
    { ...defaults, bench: path, box: '4602', username: 'other', password: 'flag' },
    0,
  );
  t.like(flagged.choice, { username: 'other', password: 'flag' });
  // --topic-prefix overrides the file's topic_prefix too, and a bad one is named as the flag.
  const prefixed = await parseConformanceFlags({ ...defaults, bench: path, box: '4602', topicPrefix: 'bench-2' }, 0);
  t.is(prefixed.choice.kind === 'mqtt' ? prefixed.choice.topics.prefix : '', 'bench-2');
  await t.throwsAsync(parseConformanceFlags({ ...defaults, bench: path, box: '4602', topicPrefix: 'lab/#' }, 0), {
    instanceOf: UsageError,
    message: /^--topic-prefix: /,
  });
  delete process.env.PB_BENCH_TEST_PW;
  await t.throwsAsync(parseConformanceFlags({ ...defaults, bench: path, box: '4602' }, 0), {
    instanceOf: UsageError,
    message: /bench\.yaml:8: boxes\[1\]\.link\.password_env: the environment variable PB_BENCH_TEST_PW is not set/,
  });
});

test('a bench of one box needs no --box; of more it does; --box is no file with --bench', async (t) => {
  const path = await bench(t, TWO_BOXES.slice(0, TWO_BOXES.indexOf('  - module_id: 4602')));
  t.is((await parseConformanceFlags({ ...defaults, bench: path }, 0)).provisioning.moduleId, 4601);
  const two = await bench(t, TWO_BOXES);
  await t.throwsAsync(parseConformanceFlags({ ...defaults, bench: two }, 0), {
    instanceOf: UsageError,
    message: /holds 2 boxes \(4601, 4602\): name one with --box MODULE_ID$/,
  });
  await t.throwsAsync(parseConformanceFlags({ ...defaults, bench: two, box: 'box-4601.json' }, 0), {
    instanceOf: UsageError,
    message: /with --bench, --box is a module_id of .*bench\.yaml, got "box-4601\.json"$/,
  });
  // Without --bench, --box is the provisioning file, as it always was.
  const box = await boxFile(t, 4603);
  const plain = await parseConformanceFlags({ ...defaults, box: box.path, serial: '/dev/null' }, 0);
  t.is(plain.provisioning.moduleId, 4603);
  t.is(plain.power, undefined);
  await t.throwsAsync(parseConformanceFlags({ ...defaults, serial: '/dev/null' }, 0), {
    message: "--box FILE is required: the box's provisioning file (or --bench FILE)",
  });
});

test('bad bench files through `parkbench conformance`: one line naming the place, exit 2', async (t) => {
  const good = TWO_BOXES.slice(0, TWO_BOXES.indexOf('  - module_id: 4602'));
  const cases: [string, RegExp][] = [
    [good.replace('    link:', '    lnk:'), /bench\.yaml:4: boxes\[0\]\.lnk: unknown key/],
    [
      good.replace('box-4601.json', 'box-4699.json'),
      /bench\.yaml:3: boxes\[0\]\.provisioning: .*box-4699\.json: no such file$/,
    ],
    [
      good.replace('{ serial: /dev/ttyUSB0, baud: 57600 }', '{ ble: nope }'),
      /bench\.yaml:4: boxes\[0\]\.link\.ble: must be a MAC address/,
    ],
    [good.replace('driver: command', 'driver: x10'), /bench\.yaml:5: boxes\[0\]\.power\.driver: unknown driver "x10"/],
    [
      good.replace('baud: 57600 }', 'baud: 57600'),
      /bench\.yaml:5:5: Flow map in block collection must be sufficiently indented and end with a \}$/,
    ],
    [
      good.replace('{ serial: /dev/ttyUSB0, baud: 57600 }', '{ mqtt: "mqtt://h:1", password: pw }'),
      /bench\.yaml:4: boxes\[0\]\.link\.password: no password in the bench file/,
    ],
    [
      good.replace('{ serial: /dev/ttyUSB0, baud: 57600 }', '{ mqtt: "mqtt://h:1", password_env: PB_BENCH_UNSET_PW }'),
      /bench\.yaml:4: boxes\[0\]\.link\.password_env: the environment variable PB_BENCH_UNSET_PW is not set/,
    ],
  ];
  for (const [yaml, line] of cases) {
    const path = await bench(t, yaml);
    const result = await runCli(['conformance', '--bench', path, '--wait-ms', '0']);
    t.is(result.code, 2, result.stderr);
    t.is(result.stderr.split('\n').length, 2, result.stderr);
    t.regex(result.stderr.trim(), new RegExp(`^parkbench: .*${line.source}`), yaml);
    t.is(result.stdout, '');
  }
});
