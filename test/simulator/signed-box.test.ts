// A simulated box of a signed parking (docs/protocol.md, version 2): ACCESS_SIGNED,
// REVOKE and SET_ISSUER through the real SimulatedBox and its state file, a
// restart in between, and the deliberate bugs of steps 4, 8a and 9.
import test, { type ExecutionContext } from 'ava';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '../../lib/fake-clock.js';
import {
  FrameKind,
  parseResponse,
  sealCommand,
  Status,
  statusName,
  verifyResponse,
} from '../../firmware-protocol/index.js';
import { SimulatedBox } from '../../simulator/simulated-box.js';
import { BoxStateFile } from '../../simulator/state-file.js';
import type { FirmwareBug } from '../../simulator/firmware-bug-names.js';
import type { Provisioning } from '../../lib/provisioning-file.js';
import { newIssuer, revoke, setIssuer, signedAccess, signedProvisioning } from '../helpers/signed-box.js';

const START = Date.UTC(2026, 5, 1, 8, 0, 0);
const now = START / 1000;

async function stateFileForTest(t: ExecutionContext): Promise<BoxStateFile> {
  const directory = await mkdtemp(join(tmpdir(), 'pb-signed-'));
  t.teardown(() => rm(directory, { recursive: true, force: true }));
  return new BoxStateFile(join(directory, 'box.json'));
}

async function startBox(
  t: ExecutionContext,
  provisioning: Provisioning,
  options: { stateFile?: BoxStateFile; bugs?: FirmwareBug[] } = {},
) {
  const box = await SimulatedBox.start({ clock: new FakeClock(START), provisioning, ...options });
  t.teardown(() => box.stop());
  return box;
}

/** Sends a command; checks the response is the box's, bound to it; returns its status name. */
async function send(t: ExecutionContext, box: SimulatedBox, command: Buffer): Promise<string> {
  const response = await box.handleCommand(command);
  if (response === null) throw new Error('no response');
  t.true(verifyResponse(response, box.provisioning.boxKey, command));
  return statusName(parseResponse(response).status) ?? 'unknown';
}

test("a signed parking's box opens for ACCESS_SIGNED under its provisioned issuer key and refuses a sealed ACCESS", async (t) => {
  const issuer = newIssuer();
  const provisioning = signedProvisioning(issuer);
  const box = await startBox(t, provisioning);
  t.is(await send(t, box, signedAccess(provisioning, issuer, { nowSeconds: now })), 'OK');
  t.is(box.barrier.state, 'opening');
  t.is(
    await send(t, box, signedAccess(provisioning, newIssuer(), { nowSeconds: now, keyId: 43 })),
    'AUTH_FAILED',
    "a stranger's signature",
  );
  const sealed = sealCommand({
    kind: FrameKind.ACCESS,
    key: provisioning.boxKey,
    keyId: 44,
    scope: provisioning.parkingId,
    body: { notBefore: now - 60, notAfter: now + 60, maxEntries: 1, maxExits: 1, moduleIds: [provisioning.moduleId] },
  });
  t.is(await send(t, box, sealed), 'AUTH_FAILED', 'no K_park: every ACCESS is AUTH_FAILED');
});

test('REVOKE then the revoked key answers REVOKED, spending no try, and the list and issuer keys survive a restart', async (t) => {
  const issuer = newIssuer();
  const provisioning = signedProvisioning(issuer);
  const stateFile = await stateFileForTest(t);
  const first = await startBox(t, provisioning, { stateFile });
  t.is(await send(t, first, signedAccess(provisioning, issuer, { nowSeconds: now, keyId: 42, tries: 2 })), 'OK');
  t.is(await send(t, first, revoke(provisioning, 1, [{ keyId: 42, until: now + 3_600 }])), 'OK');
  t.is(await send(t, first, signedAccess(provisioning, issuer, { nowSeconds: now, keyId: 42, tries: 2 })), 'REVOKED');
  await first.stop();
  const saved = JSON.parse(await readFile(stateFile.path, 'utf8')) as {
    version: number;
    issuer_key: string;
    revocations: unknown[];
  };
  t.is(saved.version, 2);
  t.is(saved.issuer_key, issuer.publicKey.toString('hex'));
  t.deepEqual(saved.revocations, [{ key_id: 42, until: now + 3_600 }]);

  const second = await startBox(t, provisioning, { stateFile: new BoxStateFile(stateFile.path) });
  t.deepEqual([...second.state.revocations], [[42, now + 3_600]]);
  const response = await second.handleCommand(
    signedAccess(provisioning, issuer, { nowSeconds: now, keyId: 42, tries: 2 }),
  );
  t.is(parseResponse(response ?? Buffer.alloc(0)).status, Status.REVOKED);
  t.is(parseResponse(response ?? Buffer.alloc(0)).remaining, 1, 'the try before the revocation is all that was spent');
  t.is(
    await send(t, second, signedAccess(provisioning, issuer, { nowSeconds: now, keyId: 43 })),
    'OK',
    'another key still opens',
  );
  t.is(
    await send(t, second, revoke(provisioning, 1, [{ keyId: 43, until: now + 60 }])),
    'REPLAY',
    'the control sequence survived too',
  );
});

test('the 65th live revocation is REVOCATION_FULL and changes nothing', async (t) => {
  const issuer = newIssuer();
  const provisioning = signedProvisioning(issuer);
  const box = await startBox(t, provisioning);
  for (let batch = 0; batch < 4; batch++) {
    const entries = Array.from({ length: 16 }, (_, index) => ({
      keyId: 1_000 + batch * 16 + index,
      until: now + 3_600,
    }));
    t.is(await send(t, box, revoke(provisioning, batch + 1, entries)), 'OK');
  }
  t.is(box.state.revocations.size, 64);
  t.is(await send(t, box, revoke(provisioning, 5, [{ keyId: 42, until: now + 3_600 }])), 'REVOCATION_FULL');
  t.is(box.state.revocations.size, 64);
  t.false(box.state.revocations.has(42));
});

test("SET_ISSUER rotation: (new, old) takes both, (new, none) drops the old, and a restart keeps the box's keys over the file's", async (t) => {
  const old = newIssuer();
  const next = newIssuer();
  const provisioning = signedProvisioning(old);
  const stateFile = await stateFileForTest(t);
  const box = await startBox(t, provisioning, { stateFile });
  t.is(await send(t, box, signedAccess(provisioning, next, { nowSeconds: now, keyId: 1 })), 'AUTH_FAILED');
  t.is(await send(t, box, setIssuer(provisioning, 1, next.publicKey, old.publicKey)), 'OK');
  t.is(await send(t, box, signedAccess(provisioning, next, { nowSeconds: now, keyId: 2 })), 'OK');
  t.is(
    await send(t, box, signedAccess(provisioning, old, { nowSeconds: now, keyId: 3 })),
    'OK',
    'the previous issuer still signs during the rotation',
  );
  t.is(await send(t, box, setIssuer(provisioning, 2, next.publicKey, null)), 'OK');
  t.is(await send(t, box, signedAccess(provisioning, old, { nowSeconds: now, keyId: 4 })), 'AUTH_FAILED');
  await box.stop();

  // The provisioning file still names the old issuer: the box's own state wins.
  const restarted = await startBox(t, provisioning, { stateFile: new BoxStateFile(stateFile.path) });
  t.deepEqual(restarted.state.issuerKey, next.publicKey);
  t.is(restarted.state.issuerKeyPrevious, null);
  t.is(await send(t, restarted, signedAccess(provisioning, old, { nowSeconds: now, keyId: 5 })), 'AUTH_FAILED');
  t.is(await send(t, restarted, signedAccess(provisioning, next, { nowSeconds: now, keyId: 6 })), 'OK');
  t.is(await send(t, restarted, setIssuer(provisioning, 2, old.publicKey, null)), 'REPLAY');
});

test('the accept-revoked firmware bug opens for a revoked key and keeps the list; nothing else changes', async (t) => {
  const issuer = newIssuer();
  const provisioning = signedProvisioning(issuer);
  const correct = await startBox(t, provisioning);
  const buggy = await startBox(t, provisioning, { bugs: ['accept-revoked'] });
  for (const box of [correct, buggy])
    t.is(await send(t, box, revoke(provisioning, 1, [{ keyId: 42, until: now + 3_600 }])), 'OK');
  t.is(await send(t, correct, signedAccess(provisioning, issuer, { nowSeconds: now })), 'REVOKED');
  t.is(await send(t, buggy, signedAccess(provisioning, issuer, { nowSeconds: now })), 'OK');
  t.deepEqual(
    [...buggy.state.revocations],
    [[42, now + 3_600]],
    'the bug skips the check, it does not forget the entry',
  );
  t.is(await send(t, buggy, signedAccess(provisioning, newIssuer(), { nowSeconds: now, keyId: 43 })), 'AUTH_FAILED');
  t.is(await send(t, buggy, signedAccess(provisioning, issuer, { nowSeconds: now - 86_400, keyId: 44 })), 'EXPIRED');
});

test("the accept-any-signature firmware bug opens for a flipped signature or a stranger's key; nothing else changes", async (t) => {
  const issuer = newIssuer();
  const provisioning = signedProvisioning(issuer);
  const correct = await startBox(t, provisioning);
  const buggy = await startBox(t, provisioning, { bugs: ['accept-any-signature'] });
  const flipped = signedAccess(provisioning, issuer, { nowSeconds: now, keyId: 42 });
  flipped[flipped.length - 1] = (flipped[flipped.length - 1] ?? 0) ^ 1;
  const stranger = signedAccess(provisioning, newIssuer(), { nowSeconds: now, keyId: 43 });
  for (const command of [flipped, stranger]) {
    t.is(await send(t, correct, command), 'AUTH_FAILED');
    t.is(await send(t, buggy, command), 'OK');
  }
  t.deepEqual(buggy.state.issuerKey, issuer.publicKey, "the box's issuer key is unchanged");
  t.is(await send(t, buggy, revoke(provisioning, 1, [{ keyId: 44, until: now + 3_600 }])), 'OK');
  t.is(await send(t, buggy, signedAccess(provisioning, issuer, { nowSeconds: now, keyId: 44 })), 'REVOKED');
  const other = { ...provisioning, boxKey: Buffer.alloc(16, 7) };
  t.is(
    await send(t, buggy, revoke(other, 2, [{ keyId: 45, until: now + 3_600 }])),
    'AUTH_FAILED',
    'sealed kinds are not its business',
  );
});

test('the accept-expired firmware bug also opens for an expired ACCESS_SIGNED', async (t) => {
  const issuer = newIssuer();
  const provisioning = signedProvisioning(issuer);
  const expired = signedAccess(provisioning, issuer, { nowSeconds: now - 7_200, notAfter: now - 3_600 });
  t.is(await send(t, await startBox(t, provisioning), expired), 'EXPIRED');
  t.is(await send(t, await startBox(t, provisioning, { bugs: ['accept-expired'] }), expired), 'OK');
});

test('the ignore-tries firmware bug opens for a key whose tries are spent: OK, remaining 0, the count kept as it was', async (t) => {
  const issuer = newIssuer();
  const provisioning = signedProvisioning(issuer);
  const once = signedAccess(provisioning, issuer, { nowSeconds: now, keyId: 42, tries: 1 });
  const never = signedAccess(provisioning, issuer, { nowSeconds: now, keyId: 43, tries: 0 });
  const remaining = async (box: SimulatedBox, command: Buffer): Promise<[string, number]> => {
    const response = await box.handleCommand(command);
    if (response === null) throw new Error('no response');
    const fields = parseResponse(response);
    return [statusName(fields.status) ?? 'unknown', fields.remaining];
  };
  const correct = await startBox(t, provisioning);
  t.deepEqual(await remaining(correct, once), ['OK', 0]);
  t.deepEqual(await remaining(correct, once), ['NO_TRIES_LEFT', 0]);
  t.deepEqual(await remaining(correct, never), ['NO_TRIES_LEFT', 0]);
  const buggy = await startBox(t, provisioning, { bugs: ['ignore-tries'] });
  for (const expected of [
    ['OK', 0],
    ['OK', 0],
    ['OK', 0],
  ])
    t.deepEqual(await remaining(buggy, once), expected, 'a key of one try');
  t.deepEqual(await remaining(buggy, never), ['OK', 0], 'a key of no try in this direction');
  t.is(buggy.barrier.state, 'opening');
  t.is(buggy.state.tries.get(42)?.count, 1, 'counted once, as the reference counts it');
  t.is(buggy.state.tries.get(43), undefined);
});
