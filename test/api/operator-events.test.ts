// Issue 17: the operator's live event stream, GET /api/operator/events
// (api/events/, api/routes/operator/events.ts). The real app on a real
// socket (app.inject cannot stream), read by a real SSE client
// (test/helpers/sse-client.ts); the flushes run on the app's FakeClock, so
// the test steps time instead of sleeping.
import test, { type ExecutionContext } from 'ava';
import { addOperator } from '../../api/operators/accounts.js';
import { TICKET_TTL_MS } from '../../api/events/tickets.js';
import { Barrier, FrameKind, sealCommand, Status } from '../../firmware-protocol/index.js';
import { errorBody, loggedIn, testApp, type TestApp } from '../helpers/api-app.js';
import { boxAnswer, boxLog, postBoxLogs } from '../helpers/box-logs.js';
import { createSession, seedParking, type SeededParking } from '../helpers/parking.js';
import { openSse, type SseClient, type SseMessage } from '../helpers/sse-client.js';
import type { ApiConfig } from '../../api/config.js';

interface Stream {
  app: TestApp;
  base: string;
  token: string;
  parking: SeededParking;
}

async function streamApp(t: ExecutionContext, overrides: Partial<ApiConfig> = {}): Promise<Stream> {
  const app = await testApp(t, overrides);
  await app.app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  const token = addOperator(app.ctx.db, 'bench', app.clock.now()).token;
  const parking = seedParking(app);
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

/** One flush of the stream (EVENTS_FLUSH_MS on the app's clock). */
function flush(stream: Stream): void {
  stream.app.clock.advance(stream.app.config.eventsFlushMs);
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
  const stored = stream.app.ctx.db.prepare('SELECT * FROM event_tickets').all() as Record<string, unknown>[];
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
