// The operator's live event stream, GET /api/operator/events
// (api/events/, api/operators/stream/routes.ts). The real app on a real
// socket (app.inject cannot stream), read by a real SSE client
// (test/helpers/sse-client.ts); the flushes run on the app's FakeClock, so
// the test steps time instead of sleeping.
import test, { type ExecutionContext } from 'ava';
import { addOperator } from '../../../../api/operators/accounts.js';
import { TICKET_TTL_MS } from '../../../../api/operators/stream/tickets.js';
import { Barrier, Status } from '../../../../firmware-protocol/index.js';
import { Writable } from 'node:stream';
import { join } from 'node:path';
import { connect as tcp } from 'node:net';
import { appLogger } from '../../../../api/app-logger.js';
import { createService } from '../../../../api/service.js';
import { configWith } from '../../../../api/config/index.js';
import { FakeClock } from '../../../../lib/fake-clock.js';
import { errorBody, loggedIn, tempDir, testApp, type TestApp } from '../../../helpers/api-app.js';
import { waitFor } from '../../../helpers/wait.js';
import { forwardingSetup, logs } from '../../../helpers/forwarding.js';
import { ok, startReceiver } from '../../../helpers/receiver.js';
import { boxAnswer, boxLog, postBoxLogs } from '../../../helpers/box-logs.js';
import { createSession, seedParking, type SeededParking } from '../../../helpers/parking.js';
import { openSse, type SseClient, type SseMessage } from '../../../helpers/sse-client.js';
import type { ApiConfig } from '../../../../api/config/index.js';
import type { BoxLogStreamItem } from '../../../../api/events/types.js';
import mqtt from 'mqtt';
import { hashMqttPassword } from '../../../../api/auth/mqtt-password.js';
import { mqttUsernameFor } from '../../../../api/boxes/repository.js';
import { Topics } from '../../../../lib/mqtt-topics.js';
import { SimulatedBox } from '../../../../simulator/simulated-box.js';
import { BoxMqttLink } from '../../../../simulator/links/mqtt-link.js';
import { MqttAccountRepository } from '../../../../api/mqtt/accounts.js';
import { MqttAcl } from '../../../../api/mqtt/acl.js';
import { provisioningOf, type SeededBox } from '../../../helpers/parking.js';
import { sendCommand, untilSubscribed } from '../../../helpers/operator-box.js';
import { all, value } from '../../../helpers/sql.js';

interface Stream {
  app: TestApp;
  base: string;
  token: string;
  parking: SeededParking;
}

async function streamApp(t: ExecutionContext, overrides: Partial<ApiConfig> = {}, withMqtt = false): Promise<Stream> {
  const app = await testApp(t, overrides, withMqtt ? { mqtt: { mode: 'embedded', host: '127.0.0.1', port: 0 } } : {});
  await app.app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  const token = (await addOperator(app.ctx.store, 'bench', app.clock.now())).token;
  const parking = await seedParking(app);
  return { app, base: `http://127.0.0.1:${port}`, token, parking };
}

async function ticket(stream: Stream): Promise<string> {
  const response = await stream.app.app.inject({
    method: 'POST',
    url: '/api/operator/events/tickets',
    headers: { authorization: `Bearer ${stream.token}` },
  });
  if (response.statusCode !== 201) throw new Error(`no ticket: ${response.body}`);
  return response.json<{ ticket: string }>().ticket;
}

function connect(
  t: ExecutionContext,
  stream: Stream,
  query = '',
  headers: Record<string, string> = {},
): Promise<SseClient> {
  return openSse(t, stream.base, `/api/operator/events${query}`, {
    authorization: `Bearer ${stream.token}`,
    ...headers,
  });
}

/** One flush of the stream (EVENTS_FLUSH_MS on the app's clock), and its end. */
async function flush(stream: Stream): Promise<void> {
  stream.app.clock.advance(stream.app.config.eventsFlushMs);
  // The timer's flush may be waiting for the one before it: this one is
  // queued after it (one at a time), so the events before it are sent.
  await stream.app.ctx.eventStream.flush();
}

const ofEvent = (event: string) => (message: SseMessage) => message.event === event;

/** A verified answer of the entrance box to a session's access command, POSTed as its phone would. */
async function postVerifiedLog(
  stream: Stream,
  accessToken: string,
  smartKeyId: number,
  accessCommand: string,
): Promise<number> {
  const command = Buffer.from(accessCommand, 'base64');
  const response = boxAnswer(stream.parking.entrance, command, { status: Status.OK, barrier: Barrier.OPENING });
  const me = await stream.app.app.inject({
    method: 'GET',
    url: '/api/car_driver/me',
    headers: { authorization: `Bearer ${accessToken}` },
  });
  const userId = me.json<{ id: number }>().id;
  const posted = await postBoxLogs(stream.app, accessToken, {
    box_logs: [
      boxLog({
        foUserId: userId,
        smartKeyId,
        box: stream.parking.entrance,
        parkingId: stream.parking.id,
        command,
        response,
        createdAt: '2025-12-31 23:59:59',
      }),
    ],
  });
  if (posted.statusCode !== 201) throw new Error(`box log refused: ${posted.body}`);
  return posted.json<{ box_logs: { id: number }[] }>().box_logs[0]?.id ?? 0;
}

async function session(
  stream: Stream,
): Promise<{ accessToken: string; sessionId: number; smartKeyId: number; accessCommand: string }> {
  const tokens = await loggedIn(stream.app);
  const created = await createSession(stream.app, tokens.access_token, {
    parking_session: { secured_parking_id: stream.parking.id },
  });
  const body = created.json<{ parking_session: { id: number }; smart_key: { id: number; access_command: string } }>();
  return {
    accessToken: tokens.access_token,
    sessionId: body.parking_session.id,
    smartKeyId: body.smart_key.id,
    accessCommand: body.smart_key.access_command,
  };
}

test('a ticket opens one stream within 30 s; used, expired, unknown or malformed: 401 invalid_ticket; a driver 403', async (t) => {
  const stream = await streamApp(t);
  const issued = await stream.app.app.inject({
    method: 'POST',
    url: '/api/operator/events/tickets',
    headers: { authorization: `Bearer ${stream.token}` },
  });
  t.is(issued.statusCode, 201, issued.body);
  const body = issued.json<{ ticket: string; expires_at: string }>();
  t.regex(body.ticket, /^[A-Za-z0-9_-]{43}$/);
  t.is(body.expires_at, new Date(stream.app.clock.now() + TICKET_TTL_MS).toISOString());
  // Stored hashed: the database holds no ticket in clear.
  const stored = await all(stream.app.ctx.store, 'SELECT * FROM event_tickets');
  t.is(stored.length, 1);
  t.false(JSON.stringify(stored).includes(body.ticket));

  const opened = await openSse(t, stream.base, `/api/operator/events?ticket=${body.ticket}`);
  t.is(opened.status, 200);
  t.regex(String(opened.headers['content-type']), /^text\/event-stream/);
  const first = await opened.next(() => true, 'the first message');
  t.is(first.event, 'snapshot');

  const again = await stream.app.app.inject({ method: 'GET', url: `/api/operator/events?ticket=${body.ticket}` });
  t.is(again.statusCode, 401);
  t.is(errorBody(t, again).error, 'invalid_ticket');

  const late = await ticket(stream);
  stream.app.clock.advance(TICKET_TTL_MS);
  for (const [what, value] of [
    ['expired', late],
    ['unknown', 'A'.repeat(43)],
    ['malformed', 'not a ticket'],
    ['empty', ''],
  ]) {
    const response = await stream.app.app.inject({
      method: 'GET',
      url: `/api/operator/events?ticket=${encodeURIComponent(value ?? '')}`,
    });
    t.is(response.statusCode, 401, what);
    t.like(errorBody(t, response), { error: 'invalid_ticket' }, what);
  }

  const driver = await loggedIn(stream.app);
  for (const url of ['/api/operator/events', '/api/operator/events/tickets']) {
    const response = await stream.app.app.inject({
      method: url.endsWith('tickets') ? 'POST' : 'GET',
      url,
      headers: { authorization: `Bearer ${driver.access_token}` },
    });
    t.is(response.statusCode, 403, url);
    t.is(errorBody(t, response).error, 'operator_required');
  }
  const none = await stream.app.app.inject({ method: 'GET', url: '/api/operator/events' });
  t.is(none.statusCode, 401);
  t.is(errorBody(t, none).error, 'unauthorized');
});

test('the snapshot comes first: parkings with live boxes, the sessions of the day, the newest box logs, forwarding', async (t) => {
  const stream = await streamApp(t);
  const driver = await session(stream);
  const logId = await postVerifiedLog(stream, driver.accessToken, driver.smartKeyId, driver.accessCommand);
  const client = await connect(t, stream);
  const snapshot = await client.next(() => true, 'the snapshot');
  t.is(snapshot.event, 'snapshot');
  t.regex(snapshot.id ?? '', /^\d+$/);
  const data = snapshot.data as {
    server_time: string;
    parkings: { id: number; boxes: { module_id: number; live: unknown; parking_id: number }[] }[];
    sessions: { id: number; state: string }[];
    box_logs: { id: number; via: string; latency_ms: number | null; status: string | null }[];
    forwarding: unknown[];
  };
  t.is(data.server_time, new Date(stream.app.clock.now()).toISOString());
  const parkings = await stream.app.app.inject({
    method: 'GET',
    url: '/api/operator/parkings',
    headers: { authorization: `Bearer ${stream.token}` },
  });
  t.deepEqual(data.parkings, parkings.json(), 'as GET /api/operator/parkings');
  t.is(data.parkings[0]?.boxes[0]?.live, null, 'no MQTT state heard yet');
  t.deepEqual(
    data.sessions.map((one) => [one.id, one.state]),
    [[driver.sessionId, 'active']],
  );
  t.like(data.box_logs.at(-1), { id: logId, via: 'http', status: 'OK', latency_ms: 1000 });
  t.deepEqual(data.forwarding, []);
});

test('a box log POSTed over HTTP arrives as box_logs, its box as boxes, its session as sessions, once per flush', async (t) => {
  const stream = await streamApp(t);
  const driver = await session(stream);
  const client = await connect(t, stream);
  await client.next(ofEvent('snapshot'), 'the snapshot');
  const logId = await postVerifiedLog(stream, driver.accessToken, driver.smartKeyId, driver.accessCommand);
  t.is(client.messages.length, 1, 'nothing before the flush');
  await flush(stream);
  const logs = await client.next(ofEvent('box_logs'), 'the box log');
  t.like(logs.data, {
    box_logs: [{ id: logId, via: 'http', source: 'http', status: 'OK', verified: true, session_id: driver.sessionId }],
    dropped: 0,
  });
  const boxes = await client.next(ofEvent('boxes'), 'the box');
  const sessions = await client.next(ofEvent('sessions'), 'the session');
  t.like(sessions.data, { sessions: [{ id: driver.sessionId, state: 'active', entrance_remaining_tries: 9 }] });
  // The box entry is the one GET /api/operator/parkings shows.
  const parkings = await stream.app.app.inject({
    method: 'GET',
    url: '/api/operator/parkings',
    headers: { authorization: `Bearer ${stream.token}` },
  });
  const entrance = parkings
    .json<{ boxes: { module_id: number }[] }[]>()[0]
    ?.boxes.find((box) => box.module_id === stream.parking.entrance.moduleId);
  t.deepEqual((boxes.data as { boxes: unknown[] }).boxes, [entrance]);
  t.like(entrance, { last_response: { box_log_id: logId, barrier: 'opening', via: 'http' } });
  // Ids increase, one message per event name.
  const ids = client.messages.map((message) => Number(message.id));
  t.deepEqual(
    ids,
    [...ids].sort((a, b) => a - b),
  );
  t.is(new Set(ids).size, ids.length);
  t.is(client.messages.length, 4);
  await flush(stream);
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.is(client.messages.length, 4, 'nothing new, nothing sent');
});

test('a client that resumes from any message it got (Last-Event-ID or last_event_id) misses nothing', async (t) => {
  const stream = await streamApp(t);
  const driver = await session(stream);
  const first = await connect(t, stream);
  await first.next(ofEvent('snapshot'), 'the snapshot');
  const logId = await postVerifiedLog(stream, driver.accessToken, driver.smartKeyId, driver.accessCommand);
  await flush(stream);
  await first.next(ofEvent('box_logs'), 'the box log');
  await first.next(ofEvent('sessions'), 'the session');
  await first.next(ofEvent('boxes'), 'the box');
  first.close();
  // Resuming from each message of that flush: what came after it in the flush comes again.
  const flushed = first.messages.slice(1);
  for (const [index, message] of flushed.entries()) {
    const later = flushed.slice(index + 1).map((one) => one.event);
    for (const how of ['header', 'query'] as const) {
      const resumed =
        how === 'header'
          ? await connect(t, stream, '', { 'last-event-id': message.id ?? '' })
          : await connect(t, stream, `?last_event_id=${message.id ?? ''}`);
      if (later.length > 0) await resumed.next((one) => one.event === later.at(-1), `${how}: the rest`);
      await new Promise((resolve) => setTimeout(resolve, 30));
      t.deepEqual(
        resumed.messages.map((one) => one.event),
        later,
        `${how} from ${message.event}`,
      );
      if (later.includes('box_logs'))
        t.like(resumed.messages.find(ofEvent('box_logs'))?.data, { box_logs: [{ id: logId }] });
      resumed.close();
    }
  }
});

test('a replay sends every missed box log, 200 a message; live, the newest 200 and how many were dropped', async (t) => {
  const stream = await streamApp(t);
  const client = await connect(t, stream);
  const snapshot = await client.next(ofEvent('snapshot'), 'the snapshot');
  client.close();
  const items = syntheticLogs(stream, 450);
  stream.app.ctx.events.publishBoxLogs(items);
  const resumed = await connect(t, stream, '', { 'last-event-id': snapshot.id ?? '' });
  // A chunk that fills the socket's buffer leaves the rest for the next flushes (nothing is queued).
  const headId = String(stream.app.ctx.events.headId);
  await flushUntil(stream, () => resumed.messages.some((message) => message.id === headId), 'the last chunk');
  const chunks = resumed.messages.map((message) => message.data as { box_logs: { id: number }[]; dropped: number });
  t.deepEqual(
    chunks.map((chunk) => [chunk.box_logs.length, chunk.dropped]),
    [
      [200, 0],
      [200, 0],
      [50, 0],
    ],
  );
  t.deepEqual(
    chunks.flatMap((chunk) => chunk.box_logs.map((log) => log.id)),
    items.map((item) => item.id),
  );
  // Live: one message per flush, the newest 200.
  stream.app.ctx.events.publishBoxLogs(syntheticLogs(stream, 450, 10_000));
  await flush(stream);
  const live = await resumed.next(ofEvent('box_logs'), 'the live message', 3);
  const data = live.data as { box_logs: { id: number }[]; dropped: number };
  t.is(data.box_logs.length, 200);
  t.is(data.dropped, 250);
  t.is(data.box_logs.at(-1)?.id, 10_449);
});

test('an id too old (past the count cap or the window), from the future or not ours gets a snapshot', async (t) => {
  const stream = await streamApp(t, { eventsReplayMax: 10, eventsReplaySeconds: 60 });
  const client = await connect(t, stream);
  const snapshot = await client.next(ofEvent('snapshot'), 'the snapshot');
  client.close();
  stream.app.ctx.events.publishBoxLogs(syntheticLogs(stream, 5));
  const within = await connect(t, stream, '', { 'last-event-id': snapshot.id ?? '' });
  t.is((await within.next(() => true, 'a replay')).event, 'box_logs');
  within.close();
  stream.app.ctx.events.publishBoxLogs(syntheticLogs(stream, 10, 100));
  const headId = stream.app.ctx.events.headId;
  const cases: [string, Record<string, string>][] = [
    ['past the cap', { 'last-event-id': snapshot.id ?? '' }],
    ['from the future', { 'last-event-id': String(headId + 1) }],
    ['another process (before this one started)', { 'last-event-id': '42' }],
    ['not a number', { 'last-event-id': 'abc' }],
  ];
  for (const [what, headers] of cases) {
    const resumed = await connect(t, stream, '', headers);
    const first = await resumed.next(() => true, what);
    t.is(first.event, 'snapshot', what);
    t.is(first.id, String(headId), what);
    resumed.close();
  }
  // Past the window: the ring forgets by time too.
  const recent = String(headId - 1);
  stream.app.clock.advance(61_000);
  const old = await connect(t, stream, '', { 'last-event-id': recent });
  t.is((await old.next(() => true, 'after the window')).event, 'snapshot');
  const malformed = await stream.app.app.inject({
    method: 'GET',
    url: '/api/operator/events?last_event_id=-1',
    headers: { authorization: `Bearer ${stream.token}` },
  });
  t.is(malformed.statusCode, 422);
  t.like(errorBody(t, malformed), { error: 'validation_failed', details: [{ path: 'last_event_id' }] });
});

/** Flushes until `done` (a socket's buffer drains between flushes). */
async function flushUntil(stream: Stream, done: () => boolean, what: string): Promise<void> {
  for (let tries = 0; tries < 100 && !done(); tries++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    if (!done()) await flush(stream);
  }
  if (!done()) throw new Error(`not seen: ${what}`);
}

let syntheticId = 0;
/** Stream items as ingestion publishes them (for counts, not contents). */
function syntheticLogs(stream: Stream, count: number, firstId = ++syntheticId * 1000): BoxLogStreamItem[] {
  return Array.from({ length: count }, (_, index) => ({
    id: firstId + index,
    source: 'mqtt',
    equipment_id: stream.parking.entrance.moduleId,
    secured_parking_id: stream.parking.id,
    fo_user_id: null,
    smart_key_id: null,
    session_id: null,
    type: 'in',
    command: null,
    response: null,
    offline: false,
    created_at: '2026-01-01 00:00:00',
    verified: false,
    box_seq: null,
    status: null,
    received_at: '2026-01-01T00:00:00.000Z',
    via: 'mqtt',
    latency_ms: 0,
  }));
}

const topics = new Topics();

/** A simulated box on the app's embedded broker, as `parkbench sim` runs one. */
async function simulatedBox(t: ExecutionContext, stream: Stream, box: SeededBox): Promise<SimulatedBox> {
  await stream.app.ctx.boxes.setMqttPasswordHash(box.moduleId, hashMqttPassword(`pw-${box.moduleId}`));
  const simulated = await SimulatedBox.start({
    clock: stream.app.clock,
    provisioning: provisioningOf(stream.parking, box),
  });
  const link = new BoxMqttLink(simulated, {
    url: stream.app.mqtt?.url ?? '',
    username: mqttUsernameFor(box.moduleId),
    password: `pw-${box.moduleId}`,
    clock: stream.app.clock,
  });
  t.teardown(async () => {
    await link.stop();
    await simulated.stop();
  });
  await link.start();
  return simulated;
}

/** An MQTT client with a box's own account (it may publish that box's state, nothing else of others). */
async function boxClient(t: ExecutionContext, stream: Stream, box: SeededBox): Promise<mqtt.MqttClient> {
  await stream.app.ctx.boxes.setMqttPasswordHash(box.moduleId, hashMqttPassword(`pw-${box.moduleId}`));
  const client = await mqtt.connectAsync(stream.app.mqtt?.url ?? '', {
    username: mqttUsernameFor(box.moduleId),
    password: `pw-${box.moduleId}`,
    reconnectPeriod: 0,
  });
  t.teardown(() => client.endAsync(true));
  return client;
}

function state(boxSeq: number, barrier = 'closed'): string {
  return JSON.stringify({
    barrier,
    battery_mv: 3700,
    box_time: '2026-01-01T00:00:00.000Z',
    box_seq: boxSeq,
    faults: [],
    updated_at: '2026-01-01T00:00:00.000Z',
  });
}

test("over MQTT: a simulated box's state is `live` and its box log arrives with via mqtt", async (t) => {
  const stream = await streamApp(t, {}, true);
  const client = await connect(t, stream);
  await client.next(ofEvent('snapshot'), 'the snapshot');
  const box = stream.parking.entrance;
  await simulatedBox(t, stream, box);
  await waitFor(() => stream.app.ctx.liveStates.of(box.moduleId) !== null, 'the retained state');
  await flush(stream);
  const boxes = await client.next(ofEvent('boxes'), 'the box with its live state');
  t.like(
    (boxes.data as { boxes: unknown[] }).boxes.find((one) => (one as { module_id: number }).module_id === box.moduleId),
    {
      module_id: box.moduleId,
      parking_id: stream.parking.id,
      live: { barrier: 'closed', faults: [] },
    },
  );
  // GET /api/operator/parkings shows it too.
  const parkings = await stream.app.app.inject({
    method: 'GET',
    url: '/api/operator/parkings',
    headers: { authorization: `Bearer ${stream.token}` },
  });
  t.like(
    parkings.json<{ boxes: { module_id: number }[] }[]>()[0]?.boxes.find((one) => one.module_id === box.moduleId),
    { live: { barrier: 'closed' } },
  );

  // A driver's access command through MQTT: the box answers, ingestion stores the log.
  const driver = await session(stream);
  await new MqttAccountRepository(stream.app.ctx.store).addClient(
    { name: 'tester', role: 'operator', username: 'op-tester', password_hash: hashMqttPassword('op-pw') },
    Date.now(),
  );
  const operator = await mqtt.connectAsync(stream.app.mqtt?.url ?? '', {
    username: 'op-tester',
    password: 'op-pw',
    reconnectPeriod: 0,
  });
  t.teardown(() => operator.endAsync(true));
  const from = client.messages.length;
  await operator.publishAsync(topics.box(box.moduleId, 'command'), JSON.stringify({ command: driver.accessCommand }), {
    qos: 1,
  });
  await waitFor(async () => (await value(stream.app.ctx.store, 'SELECT count(*) FROM box_logs')) === 1, 'the box log');
  await flush(stream);
  const logs = await client.next(ofEvent('box_logs'), 'the MQTT box log', from);
  t.like(logs.data, {
    box_logs: [
      {
        via: 'mqtt',
        source: 'mqtt',
        equipment_id: box.moduleId,
        verified: true,
        status: 'OK',
        session_id: driver.sessionId,
      },
    ],
  });
  const sessions = await client.next(ofEvent('sessions'), 'the session', from);
  t.like(sessions.data, { sessions: [{ id: driver.sessionId, state: 'active' }] });
});

test('coalescing: 1,000 states of one box make one boxes message per flush, with the newest', async (t) => {
  const stream = await streamApp(t, {}, true);
  const client = await connect(t, stream);
  await client.next(ofEvent('snapshot'), 'the snapshot');
  const box = stream.parking.exit;
  const publisher = await boxClient(t, stream, box);
  await Promise.all(
    Array.from({ length: 1000 }, (_, index) =>
      publisher.publishAsync(topics.box(box.moduleId, 'state'), state(index + 1), { qos: 1 }),
    ),
  );
  await waitFor(() => stream.app.ctx.liveStates.counters.accepted === 1000, '1,000 states');
  await flush(stream);
  const boxes = await client.next(ofEvent('boxes'), 'the boxes message');
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.is(client.messages.filter(ofEvent('boxes')).length, 1);
  const entries = (boxes.data as { boxes: { module_id: number; live: { box_seq: number } }[] }).boxes;
  t.deepEqual(
    entries.map((entry) => [entry.module_id, entry.live.box_seq]),
    [[box.moduleId, 1000]],
  );
});

test('bad state payloads are counted and dropped: the box keeps its state, the API goes on', async (t) => {
  const stream = await streamApp(t, {}, true);
  const box = stream.parking.exit;
  const publisher = await boxClient(t, stream, box);
  const topic = topics.box(box.moduleId, 'state');
  await publisher.publishAsync(topic, state(7, 'open'), { qos: 1 });
  const good = JSON.parse(state(8)) as Record<string, unknown>;
  const bad: [string, string][] = [
    ['json', 'not json'],
    ['json', '[1,2]'],
    ['barrier', JSON.stringify({ ...good, barrier: 'ajar' })],
    ['battery_mv', JSON.stringify({ ...good, battery_mv: -1 })],
    ['box_seq', JSON.stringify({ ...good, box_seq: 1.5 })],
    ['box_time', JSON.stringify({ ...good, box_time: 'yesterday' })],
    ['updated_at', JSON.stringify({ ...good, updated_at: undefined })],
    ['faults', JSON.stringify({ ...good, faults: 'jam' })],
    ['faults', JSON.stringify({ ...good, faults: [1] })],
  ];
  for (const [, payload] of bad) await publisher.publishAsync(topic, payload, { qos: 1 });
  const { counters } = stream.app.ctx.liveStates;
  await waitFor(() => Object.values(counters.refused).reduce((a, b) => a + b, 0) === bad.length, 'every bad payload');
  t.deepEqual(counters.refused, {
    json: 2,
    barrier: 1,
    battery_mv: 1,
    box_seq: 1,
    box_time: 1,
    updated_at: 1,
    faults: 2,
  });
  t.like(stream.app.ctx.liveStates.of(box.moduleId), { barrier: 'open', box_seq: 7 });
  const health = await stream.app.app.inject({ method: 'GET', url: '/health' });
  t.is(health.statusCode, 200);
});

test('a client that does not read is skipped (its deltas coalesce), never queued for, and dropped after the stall limit', async (t) => {
  const stream = await streamApp(t);
  const url = new URL(stream.base);
  const socket = tcp({ host: url.hostname, port: Number(url.port) });
  t.teardown(() => socket.destroy());
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  socket.write(
    `GET /api/operator/events HTTP/1.1\r\nHost: ${url.host}\r\nAccept: text/event-stream\r\nAuthorization: Bearer ${stream.token}\r\n\r\n`,
  );
  socket.pause(); // reads nothing: the kernel's buffers fill, then the server's socket
  let closed = false;
  socket.on('close', () => (closed = true));
  const events = stream.app.ctx.eventStream;
  await waitFor(() => events.counters.clients === 1, 'the client');
  // 200 big logs a flush (some 2 MB each), far more than any socket holds.
  const big = 'A'.repeat(10_000);
  let published = 0;
  for (let flushes = 0; flushes < 40 && events.counters.skipped < 5; flushes++) {
    const items = syntheticLogs(stream, 200, 1_000_000 + flushes * 200).map((item) => ({ ...item, command: big }));
    stream.app.ctx.events.publishBoxLogs(items);
    published += items.length * big.length;
    await flush(stream);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  t.true(events.counters.skipped >= 5, 'congested: skipped at flushes');
  t.log(
    `published ${(published / 1e6).toFixed(0)} MB of box logs; the slow client's socket held at most ${(events.counters.peakBufferedBytes / 1e6).toFixed(1)} MB`,
  );
  t.true(events.counters.peakBufferedBytes < 8_000_000, 'at most a message or two buffered');
  t.is(events.counters.dropped, 0);
  stream.app.clock.advance(30_000); // STALL_LIMIT_MS: the next flush drops it
  await flushUntil(stream, () => events.counters.dropped === 1, 'the drop');
  t.is(events.counters.clients, 0);
  socket.resume();
  await waitFor(() => closed, 'the connection closed');
});

test('the ticket never reaches the logs: the request logger prints ticket=[redacted]', async (t) => {
  let logs = '';
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs += chunk.toString();
      done();
    },
  });
  const config = configWith({ databasePath: join(tempDir(t), 'logs.sqlite'), scryptLog2N: 10 });
  const service = await createService(config, {
    clock: new FakeClock(),
    logger: appLogger({ level: 'info', stream: sink }),
  });
  const { app } = service;
  t.teardown(() => service.close());
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const base = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
  const token = (await addOperator(service.ctx.store, 'bench', Date.now())).token;
  const issued = await app.inject({
    method: 'POST',
    url: '/api/operator/events/tickets',
    headers: { authorization: `Bearer ${token}` },
  });
  const good = issued.json<{ ticket: string }>().ticket;
  const client = await openSse(t, base, `/api/operator/events?last_event_id=1&ticket=${good}`);
  await client.next(ofEvent('snapshot'), 'the snapshot');
  client.close();
  const refused = await app.inject({ method: 'GET', url: `/api/operator/events?ticket=${good}&x=1` });
  t.is(refused.statusCode, 401);
  t.true(logs.includes('request completed'), 'the logger did capture requests');
  t.true(logs.includes('/api/operator/events?last_event_id=1&ticket=[redacted]'));
  t.true(logs.includes('/api/operator/events?ticket=[redacted]&x=1'));
  t.false(logs.includes(good), 'the ticket leaked into the logs');
  t.false(logs.includes(token), 'the operator token leaked into the logs');
});

test("forwarding: a queued log and its delivery each change the parking's forwarding entry", async (t) => {
  const receiver = await startReceiver(t, [ok]);
  const setup = await forwardingSetup(t, receiver.url);
  await setup.app.app.listen({ host: '127.0.0.1', port: 0 });
  const address = setup.app.app.server.address();
  const stream: Stream = {
    app: setup.app,
    base: `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`,
    token: (await addOperator(setup.app.ctx.store, 'bench', setup.app.clock.now())).token,
    parking: setup.parking,
  };
  const client = await connect(t, stream);
  await client.next(ofEvent('snapshot'), 'the snapshot');
  t.is((await postBoxLogs(setup.app, setup.token, { box_logs: logs(setup, 1) })).statusCode, 201);
  await flush(stream);
  const queued = await client.next(ofEvent('forwarding'), 'the queued log');
  t.like(queued.data, { forwarding: [{ parking_id: setup.parking.id, url: receiver.url, pending: 1, delivered: 0 }] });
  await setup.app.ctx.forwarding.runOnce();
  await flush(stream);
  const delivered = await client.next(ofEvent('forwarding'), 'the delivery', client.messages.indexOf(queued) + 1);
  t.like(delivered.data, { forwarding: [{ parking_id: setup.parking.id, pending: 0, delivered: 1 }] });
});

test('control: a REVOKE delivered to a simulated box arrives as control deliveries (sent, then delivered with its status)', async (t) => {
  const app = await testApp(t, {}, { mqtt: { mode: 'embedded', host: '127.0.0.1', port: 0 }, startControl: true });
  await app.app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.app.server.address();
  const stream: Stream = {
    app,
    base: `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`,
    token: (await addOperator(app.ctx.store, 'bench', app.clock.now())).token,
    parking: await seedParking(app),
  };
  await simulatedBox(t, stream, stream.parking.entrance);
  await simulatedBox(t, stream, stream.parking.exit);
  const driver = await session(stream);
  const client = await connect(t, stream);
  await client.next(ofEvent('snapshot'), 'the snapshot');
  const revoked = await app.app.inject({
    method: 'POST',
    url: `/api/operator/smart_keys/${driver.smartKeyId}/revoke`,
    headers: { authorization: `Bearer ${stream.token}` },
  });
  t.is(revoked.statusCode, 200, revoked.body);
  const deliveries: { module_id: number; kind: string; outcome: string; status: string | null }[] = [];
  await flushUntil(
    stream,
    () => {
      deliveries.splice(
        0,
        deliveries.length,
        ...client.messages
          .filter(ofEvent('control'))
          .flatMap((message) => (message.data as { deliveries: typeof deliveries }).deliveries),
      );
      return deliveries.filter((delivery) => delivery.outcome === 'delivered').length === 2;
    },
    'both boxes answered',
  );
  for (const box of stream.parking.boxes) {
    const ofBox = deliveries.filter((delivery) => delivery.module_id === box.moduleId);
    t.deepEqual(
      ofBox.map((delivery) => [delivery.kind, delivery.outcome, delivery.status]),
      [
        ['REVOKE', 'sent', null],
        ['REVOKE', 'delivered', 'OK'],
      ],
    );
  }
});

test("the API's own subscription to every box's state is within its ACL; boxes gain no right", (t) => {
  const acl = new MqttAcl(topics);
  const api = { role: 'api', username: 'parkbench-api' } as const;
  const box = { role: 'box', username: 'box-9101', moduleId: 9101 } as const;
  t.true(acl.canSubscribe(api, topics.allBoxes('state')), 'the API reads every state');
  t.true(acl.canPublish(box, topics.box(9101, 'state')), 'a box publishes its own state, as before');
  t.false(acl.canPublish(box, topics.box(9102, 'state')), "never another box's");
  t.false(acl.canSubscribe(box, topics.allBoxes('state')), 'nor reads the others');
  t.false(acl.canPublish(api, topics.box(9101, 'state')), 'the API only reads states');
});

test("availability: a box's availability message changes its entry in a boxes message", async (t) => {
  const stream = await streamApp(t, {}, true);
  const client = await connect(t, stream);
  await client.next(ofEvent('snapshot'), 'the snapshot');
  const box = stream.parking.entrance;
  const publisher = await boxClient(t, stream, box);
  await publisher.publishAsync(topics.box(box.moduleId, 'availability'), 'online', { qos: 1, retain: true });
  await waitFor(() => stream.app.mqtt?.availabilityOf(box.moduleId).availability === 'online', 'online');
  // The box's event is published once its availability is stored (a read
  // and a write on the store): flushed until it is there.
  await flushUntil(stream, () => client.messages.some(ofEvent('boxes')), 'the box online');
  const boxes = await client.next(ofEvent('boxes'), 'the box online');
  t.like((boxes.data as { boxes: unknown[] }).boxes, [{ module_id: box.moduleId, availability: 'online' }]);
  await publisher.publishAsync(topics.box(box.moduleId, 'availability'), 'offline', { qos: 1, retain: true });
  await waitFor(() => stream.app.mqtt?.availabilityOf(box.moduleId).availability === 'offline', 'offline');
  const after = client.messages.indexOf(boxes) + 1;
  await flushUntil(stream, () => client.messages.slice(after).some(ofEvent('boxes')), 'the box offline');
  const later = await client.next(ofEvent('boxes'), 'the box offline', after);
  t.like((later.data as { boxes: unknown[] }).boxes, [{ module_id: box.moduleId, availability: 'offline' }]);
});

test("control: an operator's box commands arrive as control deliveries (sent, then answered with the status or unanswered) and refresh the box", async (t) => {
  const stream = await streamApp(t, {}, true);
  const { entrance, exit } = stream.parking;
  const simulated = await simulatedBox(t, stream, entrance);
  await untilSubscribed(stream.app, stream.token, entrance.moduleId, simulated);
  const client = await connect(t, stream);
  await client.next(ofEvent('snapshot'), 'the snapshot');
  const from = client.messages.length;
  const answered = await sendCommand(stream.app, stream.token, entrance.moduleId, { command: 'status' });
  t.is(answered.statusCode, 200, answered.body);
  const answer = answered.json<{ status: string; box_log_id: number }>();
  t.is(answer.status, 'OK');
  type Delivery = { module_id: number; operation_id: string; kind: string; outcome: string; status: string | null };
  const deliveries = (): Delivery[] =>
    client.messages
      .slice(from)
      .filter(ofEvent('control'))
      .flatMap((message) => (message.data as { deliveries: Delivery[] }).deliveries);
  const ofBox = (moduleId: number) => deliveries().filter((delivery) => delivery.module_id === moduleId);

  // The exit box runs no simulator: its command times out on the app's clock,
  // whose timer is set as the command is sent (the stream's 'sent' says so).
  const waiting = sendCommand(stream.app, stream.token, exit.moduleId, { command: 'battery_query' });
  await flushUntil(stream, () => ofBox(exit.moduleId).length > 0, "the exit box's command sent");
  stream.app.clock.advance(stream.app.config.boxAnswerTimeoutMs + 1);
  t.is((await waiting).statusCode, 504);
  await flushUntil(stream, () => deliveries().length === 4, 'four deliveries');
  t.deepEqual(
    ofBox(entrance.moduleId).map((delivery) => [delivery.kind, delivery.outcome, delivery.status]),
    [
      ['BATTERY_QUERY', 'sent', null],
      ['BATTERY_QUERY', 'answered', 'OK'],
    ],
  );
  t.deepEqual(
    ofBox(exit.moduleId).map((delivery) => [delivery.kind, delivery.outcome, delivery.status]),
    [
      ['BATTERY_QUERY', 'sent', null],
      ['BATTERY_QUERY', 'unanswered', null],
    ],
  );
  // One operation per request, named for its command.
  t.regex(ofBox(entrance.moduleId)[0]?.operation_id ?? '', /^operator:status:[0-9a-f-]{36}$/);
  t.is(new Set(ofBox(entrance.moduleId).map((delivery) => delivery.operation_id)).size, 1);
  t.not(ofBox(entrance.moduleId)[0]?.operation_id, ofBox(exit.moduleId)[0]?.operation_id);
  // Both boxes' entries came anew; the answered one shows the answer as its last response.
  await flushUntil(
    stream,
    () =>
      client.messages
        .slice(from)
        .filter(ofEvent('boxes'))
        .some((message) =>
          (message.data as { boxes: { module_id: number }[] }).boxes.some((box) => box.module_id === exit.moduleId),
        ),
    'the exit box anew',
  );
  const entries = client.messages
    .slice(from)
    .filter(ofEvent('boxes'))
    .flatMap((message) => (message.data as { boxes: { module_id: number; last_response: unknown }[] }).boxes);
  t.like(entries.filter((entry) => entry.module_id === entrance.moduleId).at(-1), {
    last_response: { box_log_id: answer.box_log_id, status: 'OK' },
  });
});

test('a session item names its driver (first_name, last_name) and its smart keys (smart_key_ids), before any box log: in GET /api/operator/sessions, the snapshot and sessions events', async (t) => {
  const stream = await streamApp(t);
  const driver = await session(stream);
  const expected = {
    id: driver.sessionId,
    first_name: 'Ada',
    last_name: 'Lovelace',
    smart_key_ids: [driver.smartKeyId],
  };
  const listed = await stream.app.app.inject({
    method: 'GET',
    url: '/api/operator/sessions',
    headers: { authorization: `Bearer ${stream.token}` },
  });
  t.is(listed.statusCode, 200, listed.body);
  t.like(listed.json<unknown[]>()[0], expected);
  const client = await connect(t, stream);
  const snapshot = await client.next(ofEvent('snapshot'), 'the snapshot');
  t.like((snapshot.data as { sessions: unknown[] }).sessions[0], expected);
  t.deepEqual((snapshot.data as { sessions: unknown[] }).sessions[0], listed.json<unknown[]>()[0]);
  // A sessions event (any change of the session) carries the same.
  stream.app.ctx.events.publishSession(driver.sessionId);
  await flush(stream);
  const changed = await client.next(ofEvent('sessions'), 'the sessions message');
  t.like((changed.data as { sessions: unknown[] }).sessions[0], expected);
});
