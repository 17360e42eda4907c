import test from 'ava';
import { runCli } from '../helpers/run-cli.js';

test('parkbench --help lists the subcommands and exits 0', async (t) => {
  const result = await runCli(['--help']);
  t.is(result.code, 0);
  t.regex(result.stdout, /Usage: parkbench/);
  t.regex(result.stdout, /protocol/);
});

test('an unknown subcommand is one line on stderr and exit code 2', async (t) => {
  const result = await runCli(['no-such-command']);
  t.is(result.code, 2);
  t.regex(result.stderr, /unknown command/);
});
