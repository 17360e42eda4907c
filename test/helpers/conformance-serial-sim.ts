// `parkbench sim` on one end of a real pty pair (socat), and the suite's
// command-line run on the other end: shared by the serial and capture test
// files of test/conformance. Declare their tests with `testNeeding('socat', test)`.
import type { ExecutionContext } from 'ava';
import { startCli, type CliProcess } from './cli-process.js';
import { runCli, type CliResult } from './run-cli.js';
import { ptyPairForTest } from './pty-pair.js';
import { boxFile, FAST_BARRIER_FLAGS, type BoxFile } from './conformance-fixtures.js';
import type { PtyPair } from '../../testkit/pty-pair.js';

/** `parkbench sim` serving the provisioning file `boxPath` on a fresh pty
 * pair, its state in memory; resolves once it is ready. */
export async function simServing(
  t: ExecutionContext,
  boxPath: string,
  extra: readonly string[] = [],
): Promise<{ pair: PtyPair; sim: CliProcess }> {
  const pair = await ptyPairForTest(t);
  const sim = startCli(t, [
    'sim',
    '--box',
    boxPath,
    '--serial',
    pair.a,
    '--memory-state',
    ...FAST_BARRIER_FLAGS,
    '--log-level',
    'warn',
    ...extra,
  ]);
  await sim.waitForLine(/^parkbench sim ready /);
  return { pair, sim };
}

/** `simServing` for a fresh provisioning file of box `moduleId`. */
export async function simOnPty(
  t: ExecutionContext,
  moduleId: number,
  extra: readonly string[] = [],
  overrides: Record<string, unknown> = {},
): Promise<{ box: BoxFile; pair: PtyPair; sim: CliProcess }> {
  const box = await boxFile(t, moduleId, overrides);
  return { box, ...(await simServing(t, box.path, extra)) };
}

/** `parkbench conformance --json` against the box of `box` on the serial port `port` (`path` or `path:baud`), a 5 s cycle. */
export function conformanceOnSerial(box: BoxFile, port: string, extra: readonly string[] = []): Promise<CliResult> {
  return runCli(['conformance', '--box', box.path, '--serial', port, '--cycle-ms', '5000', '--json', ...extra]);
}
