// `parkbench sim` on one end of a real pty pair (socat), for the suite's
// command-line runs on the other end: shared by the serial*.test.ts files
// of test/conformance. Declare their tests with `testNeeding('socat', test)`.
import type { ExecutionContext } from 'ava';
import { startCli, type CliProcess } from './cli-process.js';
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
