// A simulated box's state file is named by its identity (module id and a
// fingerprint of its box key): two databases that each provision box 9101
// (each with a box key and issuer key of its own) run it on one state folder
// without sharing box_seq or revocations, and each finds its own state again
// after a restart. A file named by the module id alone is taken over by the
// box whose issuer key it holds, and by no other. Real simulations (no
// links) on a temporary folder; the boxes answer real frames.
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { FakeClock } from '../../lib/fake-clock.js';
import type { Provisioning } from '../../lib/provisioning-file.js';
import { Simulation } from '../../simulator/simulation.js';
import { boxStatePath, serializeBoxState } from '../../simulator/state-file.js';
import { initialBoxState } from '../../firmware-protocol/box.js';
import { newIssuer, revoke, signedProvisioning } from '../helpers/signed-box.js';

const NOW_MS = Date.UTC(2026, 10, 23, 12);

async function folder(t: ExecutionContext): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), 'pb-state-identity-'));
  t.teardown(() => rm(directory, { recursive: true, force: true }));
  return directory;
}

/** Runs the box on the folder, lets `work` drive it, stops it; returns its state then. */
async function run(
  stateDir: string,
  provisioning: Provisioning,
  work: (box: Simulation['boxes'][number]['box']) => Promise<unknown> = () => Promise.resolve(),
) {
  const simulation = await Simulation.start({
    members: [{ provisioning, settings: {} }],
    clock: new FakeClock(NOW_MS),
    stateDir,
  });
  const entry = simulation.boxes[0];
  if (entry === undefined) throw new Error('no box');
  await work(entry.box);
  const state = entry.box.state;
  await simulation.stop();
  return state;
}

const revokeKey42 = (provisioning: Provisioning) => (box: Simulation['boxes'][number]['box']) =>
  box.handleCommand(revoke(provisioning, 1, [{ keyId: 42, until: NOW_MS / 1000 + 3_600 }]));

test('two provisionings of box 9101 keep separate state on one folder; each finds its own after a restart', async (t) => {
  const stateDir = await folder(t);
  const ci = signedProvisioning(newIssuer(), { moduleId: 9101 });
  const bench = signedProvisioning(newIssuer(), { moduleId: 9101 });

  const benchState = await run(stateDir, bench, async (box) => {
    await revokeKey42(bench)(box);
    await box.statusReport();
  });
  t.deepEqual([...benchState.revocations.keys()], [42]);
  t.is(benchState.boxSeq, 2);

  const ciState = await run(stateDir, ci, (box) => box.statusReport());
  t.deepEqual([...ciState.revocations.keys()], [], "the other database's revocations are not this box's");
  t.is(ciState.boxSeq, 1, 'nor its box_seq');
  t.is(ciState.lastControlSeq, 0);

  const benchAgain = await run(stateDir, bench);
  t.deepEqual([...benchAgain.revocations.keys()], [42], 'the same provisioning finds its state again');
  t.is(benchAgain.boxSeq, 2);
  t.is(benchAgain.lastControlSeq, 1);
  const ciAgain = await run(stateDir, ci);
  t.is(ciAgain.boxSeq, 1);

  t.deepEqual(
    (await readdir(stateDir)).sort(),
    [boxStatePath(stateDir, bench), boxStatePath(stateDir, ci)].map((path) => path.slice(stateDir.length + 1)).sort(),
  );
  t.regex(boxStatePath(stateDir, bench), /box-9101-[0-9a-f]{16}\.json$/);
});

test('a state file named by the module id alone goes to the box whose issuer key it holds, and to no other', async (t) => {
  const stateDir = await folder(t);
  const issuer = newIssuer();
  const owner = signedProvisioning(issuer, { moduleId: 9101 });
  const stranger = signedProvisioning(newIssuer(), { moduleId: 9101 });
  const legacy = join(stateDir, 'box-9101.json');
  await writeFile(
    legacy,
    serializeBoxState({
      ...initialBoxState({ issuerKey: issuer.publicKey }),
      boxSeq: 41,
      revocations: new Map([[42, NOW_MS / 1000 + 3_600]]),
    }),
  );

  const strangerState = await run(stateDir, stranger);
  t.is(strangerState.boxSeq, 0, "another parking's box starts afresh");
  t.deepEqual([...strangerState.revocations.keys()], []);
  t.true((await readdir(stateDir)).includes('box-9101.json'), 'and leaves the file alone');

  const ownerState = await run(stateDir, owner, (box) => box.statusReport());
  t.is(ownerState.boxSeq, 42, 'the box it belongs to goes on from its box_seq');
  t.deepEqual([...ownerState.revocations.keys()], [42]);
  t.false((await readdir(stateDir)).includes('box-9101.json'), 'taken over: renamed to the identity');
  t.is((await run(stateDir, owner)).boxSeq, 42);
});
