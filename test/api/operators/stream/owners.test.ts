// An operator removed by `parkbench admin operator remove`, a process of its
// own on the API's database, loses its open event streams (GET
// /api/operator/events): the API hears of it only through the store, and
// ends them before it sends them anything more. The real app on a real
// socket, real SSE clients, the real CLI; the flushes run on the app's
// FakeClock.
import test, { type ExecutionContext } from 'ava';
import { addOperator } from '../../../../api/operators/accounts.js';
import { OWNER_CHECK_MS } from '../../../../api/operators/stream/owners.js';
import { errorBody, passwordGrant, register, testApp, type TestApp } from '../../../helpers/api-app.js';
import { createSession, seedParking } from '../../../helpers/parking.js';
import { runCli } from '../../../helpers/run-cli.js';
import { openSse, type SseClient, type SseMessage } from '../../../helpers/sse-client.js';

interface Served {
  app: TestApp;
  base: string;
}

async function served(t: ExecutionContext): Promise<Served> {
  const app = await testApp(t);
  await app.app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return { app, base: `http://127.0.0.1:${port}` };
}

async function ticketOf(app: TestApp, token: string): Promise<string> {
  const response = await app.app.inject({
    method: 'POST',
    url: '/api/operator/events/tickets',
    headers: { authorization: `Bearer ${token}` },
  });
  if (response.statusCode !== 201) throw new Error(`no ticket: ${response.body}`);
  return response.json<{ ticket: string }>().ticket;
}

/** One flush of the stream (EVENTS_FLUSH_MS on the app's clock), and its end. */
async function flush(app: TestApp, ms = app.config.eventsFlushMs): Promise<void> {
  app.clock.advance(ms);
  await app.ctx.eventStream.flush();
}

/** A driver new to the database registers and opens a session: a `sessions` message naming its email. */
async function newDriverSession(app: TestApp, email: string, parkingId: number): Promise<void> {
  const driver = { email, password: 'a long password', password_confirmation: 'a long password' };
  const registered = await register(app, { ...driver, first_name: 'Late', last_name: 'Comer', phone: '+33 1 00' });
  if (registered.statusCode !== 201) throw new Error(`registration failed: ${registered.body}`);
  const login = await passwordGrant(app, email, driver.password);
  const token = login.json<{ access_token: string }>().access_token;
  const created = await createSession(app, token, { parking_session: { secured_parking_id: parkingId } });
  if (created.statusCode !== 201) throw new Error(`session refused: ${created.body}`);
}

const naming = (email: string) => (message: SseMessage) => JSON.stringify(message.data).includes(email);

async function snapshotOf(client: SseClient): Promise<void> {
  await client.next((message) => message.event === 'snapshot', 'the snapshot');
}

test("admin operator remove (another process) ends the operator's open streams; a later event never reaches them", async (t) => {
  const { app, base } = await served(t);
  const parking = await seedParking(app);
  const removed = await addOperator(app.ctx.store, 'leaving', app.clock.now());
  const watcher = await addOperator(app.ctx.store, 'watcher', app.clock.now());
  // The page's way (a ticket) and a script's (the bearer token), and another operator's stream.
  const byTicket = await openSse(t, base, `/api/operator/events?ticket=${await ticketOf(app, removed.token)}`);
  const byBearer = await openSse(t, base, '/api/operator/events', { authorization: `Bearer ${removed.token}` });
  const watching = await openSse(t, base, '/api/operator/events', { authorization: `Bearer ${watcher.token}` });
  for (const client of [byTicket, byBearer, watching]) await snapshotOf(client);

  const cli = await runCli(['admin', 'operator', 'remove', '--name', 'leaving'], { env: app.databaseEnv });
  t.is(cli.code, 0, cli.stderr);
  t.regex(cli.stdout, /operator "leaving" removed/);

  const email = 'late.comer@parkbench.test';
  await newDriverSession(app, email, parking.id);
  await flush(app);
  // The positive marker: the flush sent the new driver's session to the operator still there.
  await watching.next(naming(email), "the new driver's session, to the other operator");
  for (const [how, client] of [
    ['ticket', byTicket],
    ['bearer', byBearer],
  ] as const) {
    await client.end(`the removed operator's stream (${how}) ended`);
    t.false(client.messages.some(naming(email)), `${how}: nothing after the removal`);
    t.deepEqual(
      client.messages.map((message) => message.event),
      ['snapshot'],
      how,
    );
  }
  t.false(watching.ended, "the other operator's stream goes on");
  t.is(app.ctx.eventStream.counters.revoked, 2);

  // Coming back is refused: the token is unknown now.
  const again = await app.app.inject({
    method: 'POST',
    url: '/api/operator/events/tickets',
    headers: { authorization: `Bearer ${removed.token}` },
  });
  t.is(again.statusCode, 401);
  t.is(errorBody(t, again).error, 'invalid_token');
});

test('a quiet stream of a removed operator ends within OWNER_CHECK_MS, with nothing to send', async (t) => {
  const { app, base } = await served(t);
  const removed = await addOperator(app.ctx.store, 'leaving', app.clock.now());
  const client = await openSse(t, base, '/api/operator/events', { authorization: `Bearer ${removed.token}` });
  await snapshotOf(client);
  await flush(app); // the first flush checks the owners: still there
  const cli = await runCli(['admin', 'operator', 'remove', '--name', 'leaving'], { env: app.databaseEnv });
  t.is(cli.code, 0, cli.stderr);
  await flush(app);
  t.is(app.ctx.eventStream.counters.revoked, 0, 'nothing to send, the check not due yet');
  await flush(app, OWNER_CHECK_MS);
  await client.end('the quiet stream ended');
  t.is(app.ctx.eventStream.counters.revoked, 1);
});
