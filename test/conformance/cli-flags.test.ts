// Bad flags and bad provisioning files: a UsageError (one line, exit code 2)
// before any link is opened; checked in process for every rule (fast), and
// through the real entry point for the exit codes. A box that cannot be
// reached: one line, exit 1.
import test from 'ava';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { UsageError } from '../../cli/errors.js';
import { parseConformanceFlags, type ConformanceFlags } from '../../cli/conformance/flags.js';
import { generateIssuerKeyPair } from '../../firmware-protocol/index.js';
import { runCli } from '../helpers/run-cli.js';
import { boxFile, keysOf } from '../helpers/conformance-fixtures.js';

const defaults = {
  topicPrefix: 'parkbench',
  answerMs: '2000',
  cycleMs: '30000',
  waitMs: '10000',
  heldRevocations: '0',
  logLevel: 'warn',
  protocol: '2',
} as const;

test('each flag is validated: exactly one target, numbers in range, the provisioning file', async (t) => {
  const box = await boxFile(t, 4401);
  const broken = join(box.directory, 'broken.json');
  await writeFile(broken, JSON.stringify({ ...box.document, box_key: 'short' }));
  const offCurve = `${'00'.repeat(31)}01${'00'.repeat(31)}01`;
  const signed = await boxFile(t, 4407, keysOf('signed'));
  const cases: [Partial<ConformanceFlags>, RegExp][] = [
    [{ box: box.path }, /exactly one target/],
    [{ box: box.path, serial: '/dev/null', mqtt: 'mqtt://127.0.0.1:1' }, /exactly one target/],
    [{ box: box.path, serial: '/dev/ttyX:1234' }, /baud rate 1234/],
    [{ box: box.path, ble: 'not-a-mac' }, /--ble wants a MAC address/],
    [{ box: box.path, mqtt: 'http://x' }, /--mqtt must be an mqtt:\/\/ URL/],
    [{ box: box.path, mqtt: 'mqtt://x', topicPrefix: 'a/#' }, /--topic-prefix/],
    [{ box: box.path, serial: '/dev/null', moduleId: '1' }, /go with --mqtt/],
    [
      { box: box.path, mqtt: 'mqtt://127.0.0.1:1', moduleId: '4402' },
      /--module-id 4402 is not the module_id of .* \(4401\)/,
    ],
    [{ box: box.path, mqtt: 'mqtt://127.0.0.1:1', moduleId: 'x' }, /--module-id must be an integer/],
    [{ box: box.path, serial: '/dev/null', answerMs: 'soon' }, /--answer-ms must be an integer/],
    [{ box: box.path, serial: '/dev/null', cycleMs: '0' }, /--cycle-ms must be an integer/],
    [{ box: box.path, serial: '/dev/null', controlSeq: '-3' }, /--control-seq must be an integer/],
    [
      { box: box.path, serial: '/dev/null', controlSeq: '4294967295' },
      /--control-seq must be an integer from 1 to 4294901760/,
    ],
    [{ box: box.path, serial: '/dev/null', logLevel: 'loud' }, /--log-level/],
    [{ serial: '/dev/null' }, /--box FILE is required/],
    [{ box: join(box.directory, 'none.json'), serial: '/dev/null' }, /none\.json: no such file/],
    [{ box: broken, serial: '/dev/null' }, /box_key: must be 32 hex digits/],
    [{ box: box.path, serial: '/dev/null', protocol: '3' }, /--protocol must be 1 or 2, got "3"/],
    [
      { box: signed.path, serial: '/dev/null', protocol: '1' },
      /--protocol 1 needs a box holding K_park: .* has parking_key null/,
    ],
    [
      { box: box.path, serial: '/dev/null', restoreIssuerKeyPrevious: 'none' },
      /--restore-issuer-key-previous goes with --restore-issuer-key/,
    ],
    [{ box: box.path, serial: '/dev/null', restoreIssuerKey: 'abc' }, /--restore-issuer-key must be 128 hex digits/],
    [{ box: box.path, serial: '/dev/null', waitMs: '-1' }, /--wait-ms must be an integer from 0 to 3600000, got "-1"/],
    [
      { box: box.path, serial: '/dev/null', heldRevocations: 'x' },
      /--held-revocations must be an integer from 0 to 1024/,
    ],
    [
      { box: box.path, serial: '/dev/null', restoreIssuerKey: offCurve },
      /--restore-issuer-key is not a point on P-256/,
    ],
    [
      {
        box: box.path,
        serial: '/dev/null',
        restoreIssuerKey: generateIssuerKeyPair().publicKey.toString('hex'),
        restoreIssuerKeyPrevious: offCurve,
      },
      /--restore-issuer-key-previous is not a point/,
    ],
  ];
  for (const [flags, message] of cases) {
    const error = await t.throwsAsync(
      () => parseConformanceFlags({ ...defaults, ...flags }, 0),
      { instanceOf: UsageError },
      JSON.stringify(flags),
    );
    t.regex(error.message, message, JSON.stringify(flags));
  }
});

test('good flags: the defaults, and --control-seq from the clock', async (t) => {
  const box = await boxFile(t, 4404);
  const options = await parseConformanceFlags(
    { ...defaults, box: box.path, mqtt: 'mqtt://127.0.0.1:1883', moduleId: '4404', skipWearing: true },
    1_767_225_600_999,
  );
  t.is(options.controlSeq, 1_767_225_600);
  t.is(options.answerMs, 2_000);
  t.is(options.cycleMs, 30_000);
  t.is(options.waitMs, 10_000);
  t.is(options.heldRevocations, 0);
  t.true(options.skipWearing);
  t.is(options.choice.kind, 'mqtt');
  const ble = await parseConformanceFlags({ ...defaults, box: box.path, ble: '00:07:80:cf:11:94', controlSeq: '5' }, 0);
  t.deepEqual(ble.choice, { kind: 'ble', mac: '00:07:80:CF:11:94' });
  t.is(ble.controlSeq, 5);
  t.is(ble.protocol, 2);
  t.is(
    (await parseConformanceFlags({ ...defaults, box: box.path, serial: '/dev/null', protocol: '1' }, 0)).protocol,
    1,
  );
});

test("a box of a signed parking, or holding both, is taken; the keys put back are the file's unless named", async (t) => {
  const signed = await boxFile(t, 4405, keysOf('signed'));
  const options = await parseConformanceFlags({ ...defaults, box: signed.path, serial: '/dev/null' }, 0);
  t.is(options.provisioning.parkingKey, null);
  t.deepEqual(options.issuerKeys, {
    issuerKey: signed.provisioning.issuerKey,
    issuerKeyPrevious: signed.provisioning.issuerKeyPrevious,
  });
  const both = await boxFile(t, 4406, keysOf('both'));
  const rekeyed = generateIssuerKeyPair().publicKey;
  const named = await parseConformanceFlags(
    { ...defaults, box: both.path, serial: '/dev/null', restoreIssuerKey: rekeyed.toString('hex') },
    0,
  );
  t.deepEqual(named.issuerKeys, { issuerKey: rekeyed, issuerKeyPrevious: null });
  const previous = generateIssuerKeyPair().publicKey;
  const withPrevious = await parseConformanceFlags(
    {
      ...defaults,
      box: both.path,
      serial: '/dev/null',
      restoreIssuerKey: rekeyed.toString('hex'),
      restoreIssuerKeyPrevious: previous.toString('hex'),
    },
    0,
  );
  t.deepEqual(withPrevious.issuerKeys, { issuerKey: rekeyed, issuerKeyPrevious: previous });
});

test('through the entry point: bad flags exit 2 with one line, an unreachable box exits 1 with one line', async (t) => {
  const box = await boxFile(t, 4403);
  const bad = await runCli(['conformance', '--box', box.path, '--serial', '/dev/null', '--mqtt', 'mqtt://127.0.0.1:1']);
  t.is(bad.code, 2, bad.stderr);
  t.is(bad.stdout, '');
  t.regex(bad.stderr, /^parkbench: give exactly one target: --serial PATH\[:BAUD\], --ble MAC or --mqtt URL\n$/);
  const unknown = await runCli(['conformance', '--bogus']);
  t.is(unknown.code, 2, unknown.stderr);
  t.regex(unknown.stderr, /unknown option '--bogus'/);
  // A port that never appears: tried again for --wait-ms, then its reason.
  const serial = await runCli([
    'conformance',
    '--box',
    box.path,
    '--serial',
    join(box.directory, 'no-such-tty'),
    '--wait-ms',
    '500',
  ]);
  t.is(serial.code, 1, serial.stderr);
  t.regex(serial.stderr, /^parkbench: cannot reach the box over serial: .*no-such-tty.*\n$/);
  const mqtt = await runCli(['conformance', '--box', box.path, '--mqtt', 'mqtt://127.0.0.1:1', '--wait-ms', '0']);
  t.is(mqtt.code, 1, mqtt.stderr);
  t.regex(mqtt.stderr, /^parkbench: cannot reach the box over mqtt: .*\n$/);
});
