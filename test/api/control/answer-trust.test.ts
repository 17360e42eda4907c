// What the service believes of a box's answer (docs/protocol.md, What an
// answer proves), end to end: the real API on a fake clock, real simulated
// boxes on its broker, a driver uploading what a box answered to frames he
// made up. The box's answer is genuine (its tag verifies, the log is
// `verified`), but its echo of a frame the box refused proves nothing: it
// moves no control sequence and settles no command.
import test, { type ExecutionContext } from 'ava';
import { randomBytes } from 'node:crypto';
import { revokeSmartKey } from '../../../api/control/operations.js';
import {
  FrameKind,
  Status,
  parseResponse,
  sealCommand,
  statusName,
  type RevokeEntry,
} from '../../../firmware-protocol/index.js';
import { loggedIn, type TestApp } from '../../helpers/api-app.js';
import { boxLog, postBoxLogs, type BoxLogsBody } from '../../helpers/box-logs.js';
import { createSession } from '../../helpers/parking.js';
import {
  addParking,
  controlApp,
  provisioningOf,
  pumpUntil,
  startBox,
  type RunningBox,
} from '../../helpers/control-bench.js';
import { all } from '../../helpers/sql.js';

/** A control frame's header (docs/protocol.md, Command frame) with a made-up tag: what anyone can send a box. */
function madeUpControlFrame(kind: number, keyId: number, moduleId: number): Buffer {
  const header = Buffer.alloc(22);
  header[0] = 0x01;
  header[1] = kind;
  header.writeUInt32BE(keyId, 2);
  header.writeUInt32BE(moduleId, 6);
  randomBytes(12).copy(header, 10);
  return Buffer.concat([header, randomBytes(8)]);
}

/** A REVOKE header naming `keyId` over a frame sealed under a key the box does not hold. */
function forgedRevoke(moduleId: number, keyId: number, entries: readonly RevokeEntry[]): Buffer {
  return sealCommand({ kind: FrameKind.REVOKE, key: randomBytes(16), keyId, scope: moduleId, body: { entries } });
}

interface Bench {
  app: TestApp;
  parkingId: number;
  entrance: RunningBox;
  entranceId: number;
  token: string;
  driverId: number;
  key: { id: number; access_command: string };
}

async function bench(t: ExecutionContext, options: { startEntrance?: boolean } = {}): Promise<Bench> {
  const app = await controlApp(t);
  const parking = await addParking(app, { signed: true, isOnline: true });
  const [entranceId = 0] = parking.moduleIds;
  const entrance = await startBox(t, app, entranceId);
  if (options.startEntrance === false) await entrance.stop();
  const token = (await loggedIn(app)).access_token;
  const created = await createSession(app, token, { parking_session: { secured_parking_id: parking.id } });
  t.is(created.statusCode, 201, created.body);
  const body = created.json<{ smart_key: { id: number; access_command: string } }>();
  const driverId = (await app.ctx.smartKeys.findById(body.smart_key.id))?.user_id ?? 0;
  return { app, parkingId: parking.id, entrance, entranceId, token, driverId, key: body.smart_key };
}

/** The driver uploads what the box answered to `command` (201, and whether it verified). */
async function upload(t: ExecutionContext, b: Bench, command: Buffer, response: Buffer): Promise<boolean> {
  const provisioning = await provisioningOf(b.app, b.entranceId);
  const posted = await postBoxLogs(b.app, b.token, {
    box_logs: [
      boxLog({
        foUserId: b.driverId,
        smartKeyId: null,
        box: { moduleId: b.entranceId, direction: 'entrance', macAddress: '', boxKey: provisioning.boxKey },
        parkingId: b.parkingId,
        command,
        response,
        type: 'control',
      }),
    ],
  });
  t.is(posted.statusCode, 201, posted.body);
  return posted.json<BoxLogsBody>().box_logs[0]?.verified ?? false;
}

async function answerOf(box: RunningBox, command: Buffer): Promise<Buffer> {
  const response = await box.box.handleCommand(command);
  if (response === null) throw new Error('the box dropped the command');
  return response;
}

async function statusAt(box: RunningBox, command: Buffer): Promise<string | undefined> {
  return statusName(parseResponse(await answerOf(box, command)).status);
}

async function revokeStates(app: TestApp, moduleId: number): Promise<string[]> {
  const rows = await all<{ state: string }>(
    app.ctx.store,
    `SELECT state FROM control_commands WHERE module_id = ${moduleId} ORDER BY id`,
  );
  return rows.map((row) => row.state);
}

test("a made-up BATTERY_QUERY of key_id 0xffffffff gets a genuine AUTH_FAILED; uploaded, it uses up none of the box's control sequences: a revocation still reaches the box", async (t) => {
  const b = await bench(t);
  const frame = madeUpControlFrame(FrameKind.BATTERY_QUERY, 0xffff_ffff, b.entranceId);
  const answer = await answerOf(b.entrance, frame);
  t.like(parseResponse(answer), { status: Status.AUTH_FAILED, keyId: 0xffff_ffff });
  t.true(await upload(t, b, frame, answer), "the box's tag verifies: the log is verified");
  const learned = await b.app.ctx.boxes.learned(b.entranceId);
  t.true((learned?.next_control_seq ?? 0) < 100, `next_control_seq ${String(learned?.next_control_seq)}`);

  await revokeSmartKey(b.app.ctx, b.key.id, b.app.clock.now(), 'test');
  await pumpUntil(b.app, async () => (await revokeStates(b.app, b.entranceId))[0] === 'done', 'the REVOKE done');
  t.is(await statusAt(b.entrance, Buffer.from(b.key.access_command, 'base64')), 'REVOKED');
});

test("a REVOKE header naming the pending REVOKE's sequence over a frame the box refuses settles nothing: the REVOKE is sent again and the key refused", async (t) => {
  const b = await bench(t);
  // The box drops every command: the REVOKE goes out, unanswered, and stays pending with its sequence.
  b.entrance.box.apply({ faults: { dropCommands: 1 } });
  await revokeSmartKey(b.app.ctx, b.key.id, b.app.clock.now(), 'test');
  await pumpUntil(b.app, () => (b.app.control?.counters.sent ?? 0) > 0, 'the REVOKE sent');
  const [pending] = await all<{ control_seq: number; state: string }>(
    b.app.ctx.store,
    `SELECT control_seq, state FROM control_commands WHERE module_id = ${b.entranceId}`,
  );
  t.is(pending?.state, 'pending');
  b.entrance.box.apply({ faults: { dropCommands: 0 } });

  const forged = forgedRevoke(b.entranceId, pending?.control_seq ?? 0, [{ keyId: 999, until: 0xffff_ffff }]);
  const answer = await answerOf(b.entrance, forged);
  t.like(parseResponse(answer), { status: Status.AUTH_FAILED, kind: FrameKind.REVOKE, keyId: pending?.control_seq });
  t.true(await upload(t, b, forged, answer));
  t.deepEqual(await revokeStates(b.app, b.entranceId), ['pending'], 'the refused echo settles nothing');

  await pumpUntil(b.app, async () => (await revokeStates(b.app, b.entranceId))[0] === 'done', 'the REVOKE done');
  t.is(await statusAt(b.entrance, Buffer.from(b.key.access_command, 'base64')), 'REVOKED');
});

test("an authentic answer to another tool's frame with the pending command's sequence settles nothing: only the answer to the frame the service sent does", async (t) => {
  const b = await bench(t);
  b.entrance.box.apply({ faults: { dropCommands: 1 } });
  await revokeSmartKey(b.app.ctx, b.key.id, b.app.clock.now(), 'test');
  await pumpUntil(b.app, () => (b.app.control?.counters.sent ?? 0) > 0, 'the REVOKE sent');
  const [pending] = await all<{ control_seq: number }>(
    b.app.ctx.store,
    `SELECT control_seq FROM control_commands WHERE module_id = ${b.entranceId}`,
  );
  b.entrance.box.apply({ faults: { dropCommands: 0 } });
  // A tool holding the box key (a provisioning file) sends its own REVOKE with that sequence: the box accepts it.
  const provisioning = await provisioningOf(b.app, b.entranceId);
  const theirs = sealCommand({
    kind: FrameKind.REVOKE,
    key: provisioning.boxKey,
    keyId: pending?.control_seq ?? 0,
    scope: b.entranceId,
    body: { entries: [{ keyId: 999, until: 0xffff_ffff }] },
  });
  const answer = await answerOf(b.entrance, theirs);
  t.like(parseResponse(answer), { status: Status.OK, keyId: pending?.control_seq });
  t.true(await upload(t, b, theirs, answer));
  t.deepEqual(await revokeStates(b.app, b.entranceId), ['pending'], 'not the frame the service sent');
  const learned = await b.app.ctx.boxes.learned(b.entranceId);
  t.is(learned?.last_control_seq, pending?.control_seq, 'the sequence it accepted is learned');

  await pumpUntil(b.app, async () => (await revokeStates(b.app, b.entranceId))[0] === 'done', 'the REVOKE done');
  t.is(await statusAt(b.entrance, Buffer.from(b.key.access_command, 'base64')), 'REVOKED');
});
