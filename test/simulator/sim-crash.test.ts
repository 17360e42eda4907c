// A box killed mid-stream (SIGKILL: no chance to save anything on the way
// out) and started again goes on where it was: box_seq keeps rising and the
// tries it counted are still counted (docs/protocol.md, the check order, last paragraph).
import avaTest from 'ava';
import { parseResponse, Status } from '../../firmware-protocol/index.js';
import { startCli } from '../helpers/cli-process.js';
import { simOnCable } from '../helpers/sim-on-cable.js';
import { waitFor } from '../helpers/wait.js';
import { testNeeding } from '../helpers/requires.js';

// Skipped, with one line naming the package, where socat is not installed (a failure under CI).
const test = testNeeding('socat', avaTest);

test('tries and box_seq survive a SIGKILL in the middle of a stream of commands', async (t) => {
  // One key with 5 tries: the stream spends them across the crash.
  const { args, responses, command, send } = await simOnCable(t, 9601);

  const first = startCli(t, args);
  await first.waitForLine(/^parkbench sim ready /);
  for (let index = 0; index < 3; index++) send(command(77));
  await waitFor(() => responses.length === 3, 'three answers before the crash');
  t.is(await first.stop('SIGKILL'), 'SIGKILL');
  const before = responses.map((frame) => parseResponse(frame.payload));
  t.deepEqual(
    before.map((fields) => fields.remaining),
    [4, 3, 2],
  );

  const second = startCli(t, args);
  await second.waitForLine(/^parkbench sim ready /);
  for (let index = 0; index < 3; index++) send(command(77));
  await waitFor(() => responses.length === 6, 'three answers after the restart');
  const after = responses.slice(3).map((frame) => parseResponse(frame.payload));
  t.deepEqual(
    after.map((fields) => fields.status),
    [Status.OK, Status.OK, Status.NO_TRIES_LEFT],
    'the 2 tries left are all there were',
  );
  const sequences = [...before, ...after].map((fields) => fields.boxSeq);
  t.true(
    sequences.every((sequence, index) => index === 0 || sequence > (sequences[index - 1] ?? 0)),
    `box_seq strictly increasing: ${sequences.join(', ')}`,
  );
  t.is(await second.stop('SIGTERM'), 0);
});
