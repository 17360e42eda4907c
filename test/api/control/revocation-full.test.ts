// A box whose revocation list is full takes no REVOKE (REVOCATION_FULL): the
// key is refused by the service but still opens that box. `admin box status`
// and the operator API (GET /api/operator/parkings, what the bench page
// shows) name the box at risk and the remedy, a rotation with --re-sign: the live
// keys are signed again with the new issuer key, the previous key leaves the
// boxes at once, and with it the revoked key's signature. The real API with
// its dispatcher on a fake clock, a real simulated box on its broker.
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { boxStatuses } from '../../../api/operators/box-status.js';
import { revokeSmartKey, rotateIssuer } from '../../../api/control/operations.js';
import { addOperator } from '../../../api/operators/accounts.js';
import type { OperatorParking } from '../../../api/operators/views.js';
import { FrameKind, parseResponse, sealCommand, statusName } from '../../../firmware-protocol/index.js';
import { anotherDriver, createSession } from '../../helpers/parking.js';
import type { TestApp } from '../../helpers/api-app.js';
import {
  addParking,
  controlApp,
  provisioningOf,
  pumpUntil,
  startBox,
  statesOf,
  type RunningBox,
} from '../../helpers/control-bench.js';

async function sessionKey(app: TestApp, parkingId: number): Promise<{ id: number; command: Buffer }> {
  const token = (await anotherDriver(app)).accessToken;
  const created = await createSession(app, token, { parking_session: { secured_parking_id: parkingId } });
  const key = created.json<{ smart_key: { id: number; access_command: string } }>().smart_key;
  return { id: key.id, command: Buffer.from(key.access_command, 'base64') };
}

/** The box's entry in GET /api/operator/parkings, as an operator reads it over HTTP. */
async function operatorBoxOf(app: TestApp, token: string, moduleId: number) {
  const answer = await app.app.inject({
    method: 'GET',
    url: '/api/operator/parkings',
    headers: { authorization: `Bearer ${token}` },
  });
  if (answer.statusCode !== 200) throw new Error(answer.body);
  return answer
    .json<OperatorParking[]>()
    .flatMap((parking) => parking.boxes)
    .find((box) => box.module_id === moduleId);
}

async function statusAt(box: RunningBox, command: Buffer): Promise<string | undefined> {
  const answer = await box.box.handleCommand(command);
  return answer === null ? undefined : statusName(parseResponse(answer).status);
}

test('a revocation the box could not take: box status and the operator API name the key and the remedy; a rotation with --re-sign closes the box to it while live keys, fetched again, still open', async (t) => {
  const app = await controlApp(t);
  const parking = await addParking(app, { signed: true, isOnline: true, boxes: ['entrance'] });
  const [moduleId = 0] = parking.moduleIds;
  const entrance = await startBox(t, app, moduleId);
  // Another tool holding the box key fills its list: 4 REVOKEs of 16 entries, far in the future.
  const { boxKey } = await provisioningOf(app, moduleId);
  for (let sequence = 1; sequence <= 4; sequence++) {
    const entries = Array.from({ length: 16 }, (_, index) => ({
      keyId: 900_000 + sequence * 16 + index,
      until: 0xffff_fff0,
    }));
    const frame = sealCommand({
      kind: FrameKind.REVOKE,
      key: boxKey,
      keyId: sequence,
      scope: moduleId,
      body: { entries },
    });
    t.is(await statusAt(entrance, frame), 'OK');
  }
  const revoked = await sessionKey(app, parking.id);
  const live = await sessionKey(app, parking.id);

  const revocation = await revokeSmartKey(app.ctx, revoked.id, app.clock.now(), 'test');
  await pumpUntil(
    app,
    async () => (await statesOf(app, revocation.operation))[moduleId] === 'failed',
    'REVOCATION_FULL',
  );
  t.is(await statusAt(entrance, revoked.command), 'OK', 'the revoked key still opens the box');
  const [atRisk] = await boxStatuses(app.ctx.store, { moduleId }, app.clock.now());
  t.like(atRisk?.revocations_missing[0], { smart_key_id: revoked.id });
  t.regex(atRisk?.revocations_missing[0]?.last_error ?? '', /REVOCATION_FULL/);
  t.regex(atRisk?.remedy ?? '', new RegExp(`rotate-issuer --id ${parking.id} --re-sign`));
  const operator = (await addOperator(app.ctx.store, 'bench', app.clock.now())).token;
  const operatorAtRisk = await operatorBoxOf(app, operator, moduleId);
  t.deepEqual(operatorAtRisk?.revocations_missing, atRisk?.revocations_missing);
  t.is(operatorAtRisk?.remedy, atRisk?.remedy);

  const rotation = await rotateIssuer(app.ctx, parking.id, app.clock.now(), 'test', { reSign: true });
  await pumpUntil(
    app,
    async () => (await statesOf(app, rotation.operation))[moduleId] === 'done',
    'the new key installed',
  );
  await pumpUntil(
    app,
    async () => (await app.ctx.parkings.findById(parking.id))?.issuer_previous_public_key === null,
    'the previous key dropped from the box',
  );
  t.is(await statusAt(entrance, revoked.command), 'AUTH_FAILED', "the revoked key's signature opens nothing");
  t.is(await statusAt(entrance, live.command), 'AUTH_FAILED', 'a phone must fetch its key again');
  const fetched = await app.ctx.smartKeys.findById(live.id);
  t.is(
    await statusAt(entrance, Buffer.from(fetched?.access_command ?? randomBytes(86))),
    'OK',
    'the re-signed key opens',
  );
  const [safe] = await boxStatuses(app.ctx.store, { moduleId }, app.clock.now());
  t.deepEqual(safe?.revocations_missing, []);
  t.is(safe?.remedy, null);
  t.like(await operatorBoxOf(app, operator, moduleId), { revocations_missing: [], remedy: null });
});
