// Box logs for tests: a box's answer sealed as a real box would seal it, and
// the spec 2.1 element around it.
import type { LightMyRequestResponse } from 'fastify';
import {
  Barrier,
  Direction,
  FrameKind,
  Status,
  sealCommand,
  sealResponse,
  type ResponseFields,
} from '../../firmware-protocol/index.js';
import { ingestBoxLogs, type BoxLogIngestDeps } from '../../api/box-logs/ingest.js';
import type { BoxLogInput, BoxLogResult, IngestOptions } from '../../api/box-logs/types.js';
import { ingestStoreOf } from '../../api/box-logs/ingest-store-of.js';
import { sessionEnd } from '../../api/box-logs/session-end.js';
import { SandboxProvider } from '../../api/payments/sandbox.js';
import { BoxRepository } from '../../api/boxes/repository.js';
import { ParkingRepository } from '../../api/parkings/repository.js';
import { PaymentRepository } from '../../api/payments/repository.js';
import { SessionRepository } from '../../api/sessions/repository.js';
import { SmartKeyRepository } from '../../api/smart-keys/repository.js';
import { GroupCommit } from '../../api/db/group-commit.js';
import type { Store } from '../../api/db/store.js';
import type { Clock } from '../../lib/clock.js';
import type { TestApp } from './api-app.js';
import type { SeededBox } from './parking.js';
import { value } from './sql.js';

let nextBoxSeq = 1000;

/** A response of `box` to `command`, sealed under its box key. */
export function boxAnswer(box: SeededBox, command: Buffer | null, fields: Partial<ResponseFields> = {}): Buffer {
  const kind = command === null ? 0 : (command[1] ?? 0);
  const keyId = command === null || command.length < 22 ? 0 : command.readUInt32BE(2);
  return sealResponse(
    {
      status: Status.OK,
      kind,
      moduleId: box.moduleId,
      keyId,
      boxSeq: (nextBoxSeq += 1),
      boxTime: Math.floor(Date.UTC(2026, 0, 1) / 1000),
      batteryMv: 3700,
      barrier: Barrier.OPENING,
      direction: box.direction === 'entrance' ? Direction.ENTRANCE : Direction.EXIT,
      remaining: 9,
      ...fields,
    },
    box.boxKey,
    command,
  );
}

/** A control command (BATTERY_QUERY) sealed under the box key. */
export function controlCommand(box: SeededBox, sequence: number): Buffer {
  return sealCommand({ kind: FrameKind.BATTERY_QUERY, keyId: sequence, scope: box.moduleId, key: box.boxKey });
}

export interface LogFields {
  foUserId: number | null;
  smartKeyId: number | null;
  box: SeededBox;
  parkingId: number;
  command: Buffer | null;
  response: Buffer | null;
  type?: 'in' | 'out' | 'control';
  createdAt?: string;
  offline?: boolean;
}

/** One element of the body: `{"box_log": {...}}` (spec 2.1). */
export function boxLog(fields: LogFields): { box_log: Record<string, unknown> } {
  return {
    box_log: {
      fo_user_id: fields.foUserId,
      smart_key_id: fields.smartKeyId,
      equipment_id: fields.box.moduleId,
      secured_parking_id: fields.parkingId,
      type: fields.type ?? (fields.box.direction === 'entrance' ? 'in' : 'out'),
      command: fields.command?.toString('base64') ?? null,
      command_decrypted: fields.command ? 'ACCESS …' : null,
      response: fields.response?.toString('base64') ?? null,
      response_decrypted: fields.response ? 'OK …' : null,
      offline: fields.offline ?? false,
      created_at: fields.createdAt ?? '2026-01-01 00:00:00',
      point_attributes: { latitude: 48.8566, longitude: 2.3522 },
    },
  };
}

export function postBoxLogs(
  test: TestApp,
  accessToken: string | undefined,
  body: unknown,
): Promise<LightMyRequestResponse> {
  return test.app.inject({
    method: 'POST',
    url: '/api/box_logs',
    headers: {
      'content-type': 'application/json',
      ...(accessToken === undefined ? {} : { authorization: `Bearer ${accessToken}` }),
    },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

export async function countRows(test: TestApp, table: string): Promise<number> {
  return Number(await value(test.ctx.store, `SELECT count(*) FROM ${table}`));
}

export interface BoxLogsBody {
  box_logs: { id: number; verified: boolean; duplicate: boolean }[];
}

/** Box logs through the ingestion path without HTTP, as MQTT ingestion calls it: a unit of the group commit. */
export function ingestThroughGroup(
  ctx: BoxLogIngestDeps & { groupCommit: Pick<GroupCommit, 'run'> },
  entries: readonly BoxLogInput[],
  options: IngestOptions,
): Promise<BoxLogResult[]> {
  return ctx.groupCommit.run((on) => ingestBoxLogs(ctx, on, entries, options));
}

/** What an ingestion on a store told the event stream and the forwarding worker. */
export interface Told {
  boxLogs: number[];
  boxes: number[];
  sessions: number[];
  forwarding: number[];
  notified: number;
}

/** Box-log ingestion's dependencies built on a `Store` (either engine), with
 * its own group commit: the whole app does not run on PostgreSQL yet. */
export function ingestionOn(
  store: Store,
  clock: Clock,
): { deps: BoxLogIngestDeps & { groupCommit: GroupCommit }; told: Told } {
  const told: Told = { boxLogs: [], boxes: [], sessions: [], forwarding: [], notified: 0 };
  const events = {
    publishBoxLogs: (items: readonly { id: number }[]) => told.boxLogs.push(...items.map((item) => item.id)),
    publishBox: (moduleId: number) => told.boxes.push(moduleId),
    publishSession: (sessionId: number) => told.sessions.push(sessionId),
    publishForwarding: (parkingId: number) => told.forwarding.push(parkingId),
  };
  // The session service over the store, as the app builds it (api/context.ts).
  const payments = new PaymentRepository(store);
  const end = sessionEnd({
    store,
    clock,
    events,
    config: { exitKeyMinutes: 15 },
    parkings: new ParkingRepository(store),
    boxes: new BoxRepository(store),
    sessions: new SessionRepository(store),
    payments,
    smartKeys: new SmartKeyRepository(store),
    paymentProvider: new SandboxProvider({
      store,
      payments,
      clock,
      publicUrl: 'http://127.0.0.1:3000',
      returnSchemes: [],
      parkingNameOf: () => Promise.resolve('Parking'),
    }),
  });
  return {
    deps: {
      clock,
      ingestStore: ingestStoreOf(store),
      sessionEnd: end,
      forwarding: { notify: () => void (told.notified += 1) },
      events,
      groupCommit: new GroupCommit(store),
    },
    told,
  };
}
