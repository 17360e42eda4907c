// Bad flags and bad provisioning files: one line on stderr, exit code 2,
// before any link is opened. A box that cannot be reached: exit 1.
import test from 'ava';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCli } from '../helpers/run-cli.js';
import { boxFile } from './fixtures.js';

test('bad flags and bad provisioning files exit 2 with one line', async (t) => {
  const box = await boxFile(t, 4401);
  const broken = join(box.directory, 'broken.json');
  await writeFile(broken, JSON.stringify({ ...box.document, box_key: 'short' }));
  const cases: [string[], RegExp][] = [
    [['conformance', '--box', box.path], /exactly one target/],
    [['conformance', '--box', box.path, '--serial', '/dev/null', '--mqtt', 'mqtt://127.0.0.1:1'], /exactly one target/],
    [['conformance', '--box', box.path, '--serial', '/dev/ttyX:1234'], /baud rate 1234/],
    [['conformance', '--box', box.path, '--ble', 'not-a-mac'], /--ble wants a MAC address/],
    [['conformance', '--box', box.path, '--mqtt', 'http://x'], /--mqtt must be an mqtt:\/\/ URL/],
    [['conformance', '--box', box.path, '--serial', '/dev/null', '--module-id', '1'], /go with --mqtt/],
    [['conformance', '--box', box.path, '--mqtt', 'mqtt://127.0.0.1:1', '--module-id', '4402'], /--module-id 4402 is not the module_id/],
    [['conformance', '--box', box.path, '--serial', '/dev/null', '--answer-ms', 'soon'], /--answer-ms must be an integer/],
    [['conformance', '--box', box.path, '--serial', '/dev/null', '--cycle-ms', '0'], /--cycle-ms must be an integer/],
    [['conformance', '--box', box.path, '--serial', '/dev/null', '--control-seq', '-3'], /--control-seq must be an integer/],
    [['conformance', '--serial', '/dev/null'], /--box FILE is required/],
    [['conformance', '--box', join(box.directory, 'none.json'), '--serial', '/dev/null'], /none\.json: no such file/],
    [['conformance', '--box', broken, '--serial', '/dev/null'], /box_key: must be 32 hex digits/],
    [['conformance', '--box', box.path, '--serial', '/dev/null', '--bogus'], /unknown option/],
  ];
  for (const [args, message] of cases) {
    const result = await runCli(args);
    t.is(result.code, 2, args.join(' '));
    t.regex(result.stderr, message, args.join(' '));
    t.is(result.stdout, '', args.join(' '));
    if (!args.includes('--bogus')) t.is(result.stderr.trim().split('\n').length, 1, result.stderr);
  }
});

test('a box that cannot be reached is one line and exit 1', async (t) => {
  const box = await boxFile(t, 4403);
  const serial = await runCli(['conformance', '--box', box.path, '--serial', join(box.directory, 'no-such-tty')]);
  t.is(serial.code, 1);
  t.regex(serial.stderr, /^parkbench: cannot reach the box over serial: .*no-such-tty/);
  t.is(serial.stderr.trim().split('\n').length, 1, serial.stderr);
  const mqtt = await runCli(['conformance', '--box', box.path, '--mqtt', 'mqtt://127.0.0.1:1']);
  t.is(mqtt.code, 1);
  t.regex(mqtt.stderr, /^parkbench: cannot reach the box over mqtt: /);
});
