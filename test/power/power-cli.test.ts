// `parkbench power on|off|cycle --bench F --box ID` through the real command
// line, with the usbrelay stand-in first on PATH: the switch worked, the
// output (text, --json), exit 1 and one line when the switch fails, 2 for
// bad flags, a bad bench file or a plug password missing from the environment.
import test, { type ExecutionContext } from 'ava';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { boxFile } from '../helpers/conformance-fixtures.js';
import { runCli } from '../helpers/run-cli.js';
import { standIns, type StandIns } from './stand-ins.js';

/** A bench of boxes 4301 (relay HURTM_1, settle 300 ms) and 4302 (relay HURTM_9, not on the board), and the stand-ins. */
async function bench(t: ExecutionContext): Promise<{ path: string; tools: StandIns }> {
  const first = await boxFile(t, 4301);
  const second = await boxFile(t, 4302);
  const path = join(first.directory, 'bench.yaml');
  await writeFile(
    path,
    `boxes:
  - module_id: 4301
    provisioning: box-4301.json
    link: { serial: /dev/ttyUSB0 }
    power: { driver: usbrelay, relay: HURTM_1, settle_ms: 300, off_ms: 50 }
  - module_id: 4302
    provisioning: ${second.path}
    link: { serial: /dev/ttyUSB1 }
    power: { driver: usbrelay, relay: HURTM_9 }
  - module_id: 4303
    provisioning: ${(await boxFile(t, 4303)).path}
    link: { ble: "00:07:80:AA:BB:03" }
  - module_id: 4304
    provisioning: ${(await boxFile(t, 4304)).path}
    link: { serial: /dev/ttyUSB4 }
    power: { driver: http, url: "http://127.0.0.1:9", api: shelly, password_env: PB_TEST_UNSET_PLUG_PW }
`,
  );
  return { path, tools: await standIns(t) };
}

test('power off, on and cycle work the switch; cycle waits settle_ms and says so; --json', async (t) => {
  const { path, tools } = await bench(t);
  const off = await runCli(['power', 'off', '--bench', path, '--box', '4301'], { env: tools.env });
  t.is(off.code, 0, off.stderr);
  t.regex(off.stdout, /^box 4301: power off \(usbrelay HURTM_1\), \d+ ms\n$/);
  t.is(await tools.state('usbrelay'), 'HURTM_1=0\nHURTM_2=0\n');
  const on = await runCli(['power', 'on', '--bench', path, '--box', '4301'], { env: tools.env });
  t.is(on.code, 0, on.stderr);
  t.is(await tools.state('usbrelay'), 'HURTM_1=1\nHURTM_2=0\n');
  const cycle = await runCli(['power', 'cycle', '--bench', path, '--box', '4301', '--json'], { env: tools.env });
  t.is(cycle.code, 0, cycle.stderr);
  const done = JSON.parse(cycle.stdout) as Record<string, unknown>;
  t.like(done, { module_id: 4301, action: 'cycle', driver: 'usbrelay', switch: 'usbrelay HURTM_1', settle_ms: 300 });
  // off_ms 50 between off and on, then settle_ms 300.
  t.true((done.ms as number) >= 350, String(done.ms));
  t.deepEqual(await tools.calls(), ['HURTM_1=0', 'HURTM_1=1', 'HURTM_1=0', 'HURTM_1=1']);
  const text = await runCli(['power', 'cycle', '--bench', path, '--box', '4301'], { env: tools.env });
  t.regex(text.stdout, /^box 4301: power cycled \(usbrelay HURTM_1\), then waited settle_ms 300 ms, \d+ ms\n$/);
});

test('a switch that fails: exit 1 and one line naming the box and the command', async (t) => {
  const { path, tools } = await bench(t);
  const result = await runCli(['power', 'off', '--bench', path, '--box', '4302'], { env: tools.env });
  t.is(result.code, 1);
  t.is(result.stderr, 'parkbench: box 4302: power off: `usbrelay HURTM_9=0` exit code 1: Device: HURTM_9 not found\n');
  t.is(result.stdout, '');
});

test('bad flags and a bad bench file: exit 2, one line', async (t) => {
  const { path, tools } = await bench(t);
  const cases: [readonly string[], RegExp][] = [
    [['power', 'off', '--box', '4301'], /^parkbench: --bench FILE is required/],
    [
      ['power', 'off', '--bench', path],
      /bench\.yaml: holds 4 boxes \(4301, 4302, 4303, 4304\): name one with --box MODULE_ID$/,
    ],
    [['power', 'off', '--bench', path, '--box', '9'], /bench\.yaml: no box 9 \(it holds 4301, 4302, 4303, 4304\)$/],
    [
      ['power', 'off', '--bench', path, '--box', 'box-4301.json'],
      /with --bench, --box is a module_id of .*bench\.yaml, got "box-4301\.json"$/,
    ],
    [['power', 'off', '--bench', path, '--box', '4303'], /bench\.yaml:10: boxes\[2\]: box 4303 has no power: entry/],
    [
      ['power', 'off', '--bench', path, '--box', '4304'],
      /bench\.yaml:16: boxes\[3\]\.power\.password_env: the environment variable PB_TEST_UNSET_PLUG_PW is not set \(the plug's web password\)$/,
    ],
    [
      ['power', 'off', '--bench', join(path, '..', 'none.yaml'), '--box', '4301'],
      /none\.yaml: cannot read the bench file: no such file$/,
    ],
  ];
  for (const [args, line] of cases) {
    const result = await runCli(args, { env: tools.env });
    t.is(result.code, 2, args.join(' '));
    t.regex(result.stderr.trim(), line, args.join(' '));
    t.is(result.stderr.trim().split('\n').length, 1, result.stderr);
  }
  const action = await runCli(['power', 'toggle', '--bench', path]);
  t.is(action.code, 2);
  t.regex(action.stderr, /value 'toggle' is invalid for argument 'action'\. Allowed choices are on, off, cycle/);
  t.deepEqual(await tools.calls(), []);
});
