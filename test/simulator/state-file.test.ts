import test from 'ava';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BoxStateFile, StateFileError } from '../../simulator/state-file.js';
import { initialBoxState } from '../../firmware-protocol/box.js';
import { generateIssuerKeyPair } from '../../firmware-protocol/index.js';

async function temporaryDirectory(t: { teardown: (fn: () => Promise<void>) => void }): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), 'pb-state-'));
  t.teardown(() => rm(directory, { recursive: true, force: true }));
  return directory;
}

test('a new box starts from box_seq 0 with no tries', async (t) => {
  const file = new BoxStateFile(join(await temporaryDirectory(t), 'box.json'));
  const state = await file.load();
  t.is(state.boxSeq, 0);
  t.is(state.lastControlSeq, 0);
  t.is(state.tries.size, 0);
});

test('what was saved is what a restarted box loads', async (t) => {
  const path = join(await temporaryDirectory(t), 'box.json');
  await new BoxStateFile(path).save({
    ...initialBoxState(),
    boxSeq: 41,
    lastControlSeq: 7,
    tries: new Map([[42, { count: 2, notAfter: 1_800_000_000 }]]),
  });
  const state = await new BoxStateFile(path).load();
  t.is(state.boxSeq, 41);
  t.is(state.lastControlSeq, 7);
  t.deepEqual([...state.tries], [[42, { count: 2, notAfter: 1_800_000_000 }]]);
});

test('saves land in the order they were asked for', async (t) => {
  const path = join(await temporaryDirectory(t), 'box.json');
  const file = new BoxStateFile(path);
  await Promise.all(Array.from({ length: 25 }, (_, index) => file.save({ ...initialBoxState(), boxSeq: index })));
  t.is((await file.load()).boxSeq, 24);
});

test('a corrupt state file is refused with its path, not taken as a new box', async (t) => {
  const path = join(await temporaryDirectory(t), 'box.json');
  await writeFile(path, '{"version":1,"box_seq":-1,"last_control_seq":0,"tries":[]}');
  await t.throwsAsync(new BoxStateFile(path).load(), {
    instanceOf: StateFileError,
    message: /box\.json: not a box state file/,
  });
  await writeFile(path, '{"version":1,');
  await t.throwsAsync(new BoxStateFile(path).load(), { instanceOf: StateFileError, message: /not valid JSON/ });
});

const issuer = generateIssuerKeyPair().publicKey;
const previous = generateIssuerKeyPair().publicKey;
const seedKey = generateIssuerKeyPair().publicKey;

test('issuer keys and the revocation list (64 entries) survive a restart', async (t) => {
  const path = join(await temporaryDirectory(t), 'box.json');
  const revocations = new Map(
    Array.from({ length: 64 }, (_, index) => [1_000 + index, 1_800_000_000 + index] as const),
  );
  await new BoxStateFile(path).save({
    ...initialBoxState(),
    boxSeq: 9,
    issuerKey: issuer,
    issuerKeyPrevious: previous,
    revocations,
  });
  // The provisioning file's keys do not win over the box's own.
  const state = await new BoxStateFile(path).load({ issuerKey: seedKey });
  t.deepEqual(state.issuerKey, issuer);
  t.deepEqual(state.issuerKeyPrevious, previous);
  t.deepEqual([...state.revocations], [...revocations]);
});

test("a new box, and an old (version 1) state file, start with the provisioning file's issuer keys", async (t) => {
  const directory = await temporaryDirectory(t);
  const fresh = await new BoxStateFile(join(directory, 'new.json')).load({
    issuerKey: seedKey,
    issuerKeyPrevious: previous,
  });
  t.deepEqual([fresh.issuerKey, fresh.issuerKeyPrevious], [seedKey, previous]);
  const path = join(directory, 'old.json');
  await writeFile(
    path,
    '{"version":1,"box_seq":41,"last_control_seq":7,"tries":[{"key_id":42,"count":2,"not_after":1800000000}]}\n',
  );
  const old = await new BoxStateFile(path).load({ issuerKey: seedKey });
  t.is(old.boxSeq, 41);
  t.is(old.lastControlSeq, 7);
  t.deepEqual(old.issuerKey, seedKey);
  t.is(old.issuerKeyPrevious, null);
  t.is(old.revocations.size, 0);
  const unseeded = await new BoxStateFile(path).load();
  t.is(unseeded.issuerKey, null, 'no issuer key anywhere: every ACCESS_SIGNED is AUTH_FAILED');
});

test('a state file with a bad issuer key or revocation entry is refused with its path', async (t) => {
  const path = join(await temporaryDirectory(t), 'box.json');
  await writeFile(
    path,
    `{"version":2,"box_seq":1,"last_control_seq":0,"tries":[],"issuer_key":"${'00'.repeat(64)}","issuer_key_previous":null,"revocations":[]}`,
  );
  await t.throwsAsync(new BoxStateFile(path).load(), {
    instanceOf: StateFileError,
    message: /box\.json: issuer_key is not 128 hex digits of a point on P-256/,
  });
  await writeFile(
    path,
    '{"version":2,"box_seq":1,"last_control_seq":0,"tries":[],"issuer_key":null,"issuer_key_previous":null,"revocations":[{"key_id":-4,"until":1}]}',
  );
  await t.throwsAsync(new BoxStateFile(path).load(), {
    instanceOf: StateFileError,
    message: /box\.json: a revocations entry is not \{key_id, until\}/,
  });
});
