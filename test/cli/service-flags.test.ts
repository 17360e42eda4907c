// The flags of the commands that speak to a running service (`reserve`,
// `release`, `conformance --record`, `soak --record`), through the real
// command line: each problem is one line and exit 2, before anything is
// opened (no service is running here, no box either).
import test from 'ava';
import { runCli } from '../helpers/run-cli.js';
import { NO_CI } from '../helpers/operator-service.js';
import { boxFile } from '../helpers/conformance-fixtures.js';

const SERVICE = { ...NO_CI, PARKBENCH_URL: 'http://127.0.0.1:9', PARKBENCH_OPERATOR_TOKEN: 'op-token' };

const RESERVE_CASES: { args: string[]; env?: Record<string, string>; line: RegExp }[] = [
  { args: ['--ttl', '30m'], line: /--box is required/ },
  { args: ['--box', 'x', '--ttl', '30m'], line: /--box must be a module_id/ },
  { args: ['--box', '4242'], line: /--ttl is required/ },
  { args: ['--box', '4242', '--ttl', '30'], line: /--ttl: "30" is no duration/ },
  { args: ['--box', '4242', '--ttl', '25h'], line: /--ttl is at most 86400 s/ },
  { args: ['--box', '4242', '--ttl', '30m', '--wait', '2h'], line: /--wait is at most 3600 s/ },
  { args: ['--box', '4242', '--ttl', '30m', '--note', 'n'.repeat(201)], line: /--note is at most 200/ },
  { args: ['--box', '4242', '--ttl', '30m'], env: { ...NO_CI }, line: /reserve needs the service: --service-url/ },
  {
    args: ['--box', '4242', '--ttl', '30m'],
    env: { ...NO_CI, PARKBENCH_URL: 'http://127.0.0.1:9' },
    line: /needs an operator's token: --operator-token T or \$PARKBENCH_OPERATOR_TOKEN/,
  },
  {
    args: ['--box', '4242', '--ttl', '30m', '--service-url', 'ftp://bench'],
    line: /--service-url must be an http:\/\/ or https:\/\/ URL/,
  },
];

for (const { args, env, line } of RESERVE_CASES) {
  test(`reserve ${args.join(' ').slice(0, 60)}: one line, exit 2 (${line.source.slice(0, 30)})`, async (t) => {
    const result = await runCli(['reserve', ...args], { env: env ?? SERVICE });
    t.is(result.code, 2, result.stderr);
    t.regex(result.stderr, line);
    t.is(result.stderr.trim().split('\n').length, 1, result.stderr);
    t.is(result.stdout, '');
  });
}

test("release without a token: one line, exit 2; the operator's token never printed", async (t) => {
  const result = await runCli(['release', '--box', '4242'], { env: SERVICE });
  t.is(result.code, 2);
  t.regex(result.stderr, /release needs the reservation's token: --token T or \$PARKBENCH_RESERVATION/);
  t.false(result.stderr.includes('op-token'));
});

test('a service that cannot be reached: reserve and release exit 1, one line, no token in it', async (t) => {
  for (const args of [
    ['reserve', '--box', '4242', '--ttl', '30m'],
    ['release', '--box', '4242', '--token', 'reservation-token'],
  ]) {
    const result = await runCli(args, { env: SERVICE });
    t.is(result.code, 1, result.stderr);
    t.regex(result.stderr, /^parkbench: cannot reach http:\/\/127\.0\.0\.1:9: /);
    t.is(result.stderr.trim().split('\n').length, 1);
    t.false(result.stderr.includes('op-token'));
  }
});

for (const command of ['conformance', 'soak'] as const) {
  const extra = command === 'soak' ? ['--cycles', '1'] : [];
  const cases: { args: string[]; env?: Record<string, string>; line: RegExp }[] = [
    { args: ['--record', '--label', 'firmware'], line: /--label must be NAME=VALUE, got "firmware"/ },
    { args: ['--record', '--label', 'bad name=1'], line: /--label bad name=1: a label's name is 1 to 64/ },
    { args: ['--record', '--label', '=1'], line: /--label =1: a label's name is 1 to 64/ },
    { args: ['--label', 'firmware=1'], line: /--label goes with --record/ },
    { args: ['--record', '--label', `v=${'x'.repeat(513)}`], line: /a label's value is at most 512 characters/ },
    { args: ['--record'], env: { ...NO_CI }, line: new RegExp(`${command} --record needs the service`) },
    {
      args: ['--record', '--service-url', 'http://127.0.0.1:9'],
      env: { ...NO_CI },
      line: new RegExp(`${command} --record needs an operator's token`),
    },
  ];
  for (const { args, env, line } of cases) {
    test(`${command} ${args.join(' ').slice(0, 60)}: one line, exit 2, nothing opened`, async (t) => {
      const box = await boxFile(t, 4301);
      // The broker's port is closed: had the link been opened, the error would be another.
      const result = await runCli([command, '--box', box.path, '--mqtt', 'mqtt://127.0.0.1:9', ...extra, ...args], {
        env: env ?? SERVICE,
      });
      t.is(result.code, 2, result.stderr);
      t.regex(result.stderr, line);
      t.is(result.stderr.trim().split('\n').length, 1, result.stderr);
    });
  }
}

test('--help of reserve, release, conformance and soak names the new flags', async (t) => {
  const reserve = await runCli(['reserve', '--help']);
  for (const flag of ['--box', '--ttl', '--wait', '--note', '--json', '--token', '--service-url', '--operator-token'])
    t.true(reserve.stdout.includes(flag), flag);
  const release = await runCli(['release', '--help']);
  t.true(release.stdout.includes('--token'));
  for (const command of ['conformance', 'soak']) {
    const help = await runCli([command, '--help']);
    for (const flag of ['--record', '--label', '--service-url', '--operator-token', '--reservation'])
      t.true(help.stdout.includes(flag), `${command} ${flag}`);
  }
});
