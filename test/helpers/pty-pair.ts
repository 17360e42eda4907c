// A pty pair (testkit/pty-pair.ts) for one test: closed when the test ends.
// Declare the tests that use it with `testNeeding('socat', test)` (requires.ts).
import type { ExecutionContext } from 'ava';
import { startPtyPair, type PtyPair } from '../../testkit/pty-pair.js';

export async function ptyPairForTest(t: ExecutionContext): Promise<PtyPair> {
  const pair = await startPtyPair();
  t.teardown(() => pair.close());
  return pair;
}
