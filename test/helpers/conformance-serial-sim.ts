// `parkbench sim` on one end of a real pty pair (socat), and the suite's
// command-line run on the other end: shared by the serial and capture test
// files of test/conformance. Declare their tests with `testNeeding('socat', test)`.
import type { ExecutionContext } from 'ava';
import { startCli, type CliProcess } from './cli-process.js';
import { runCli, type CliResult } from './run-cli.js';
import { ptyPairForTest } from './pty-pair.js';
import { boxFile, FAST_BARRIER_FLAGS, type BoxFile } from './conformance-fixtures.js';
import type { PtyPair } from '../../testkit/pty-pair.js';

export async function simOnPty(
  t: ExecutionContext,
  moduleId: number,
  extra: readonly string[] = [],
  overrides: Record<string, unknown> = {},
): Promise<{ box: BoxFile; pair: PtyPair; sim: CliProcess }> {
  const box = await boxFile(t, moduleId, overrides);
  const pair = await ptyPairForTest(t);
  const sim = startCli(t, [
    'sim',
    '--box',
    box.path,
    '--serial',
    pair.a,
    '--memory-state',
    ...FAST_BARRIER_FLAGS,
    '--log-level',
    'warn',
    ...extra,
  ]);
  await sim.waitForLine(/^parkbench sim ready /);
  return { box, pair, sim };
}

/** `parkbench conformance --json` against the box of `box` on the serial port `port` (`path` or `path:baud`), a 5 s cycle. */
export function conformanceOnSerial(box: BoxFile, port: string, extra: readonly string[] = []): Promise<CliResult> {
  return runCli(['conformance', '--box', box.path, '--serial', port, '--cycle-ms', '5000', '--json', ...extra]);
}
