// The live stream across API processes on PostgreSQL (api/events/relay.ts):
// two apps on one database, each with its own pool, listener and clock, as
// two `parkbench api` processes have. A page connected to one sees the box
// logs and sessions the other stores, its own once; when its listening
// connection is cut, its clients get a snapshot and it listens again.
import test, { type ExecutionContext } from 'ava';
import pg from 'pg';
import { addOperator } from '../../../api/operators/accounts.js';
import { RECONNECT_MS } from '../../../api/events/relay.js';
import { Barrier, Status } from '../../../firmware-protocol/index.js';
import { FakeClock } from '../../../lib/fake-clock.js';
import { me, tempDir, testApp, type TestApp } from '../../helpers/api-app.js';
import { boxAnswer, boxLog, postBoxLogs } from '../../helpers/box-logs.js';
import { anotherDriver, createSession, seedParking, type SeededParking } from '../../helpers/parking.js';
import { EXISTING_SERVER_VARIABLE, postgresForFile } from '../../helpers/postgres.js';
import { testNeeding } from '../../helpers/requires.js';
import { openSse, type SseClient, type SseMessage } from '../../helpers/sse-client.js';
import { waitFor } from '../../helpers/wait.js';

const database = postgresForFile(test);
const postgresTest = testNeeding('postgres', test.serial);

interface Process {
  app: TestApp;
  base: string;
}

/** Two API processes on one new database. */
async function twoProcesses(t: ExecutionContext): Promise<[Process, Process]> {
  // The test apps' databases are made on this file's server (or the run's).
  process.env[EXISTING_SERVER_VARIABLE] ??= database().url;
  const dir = tempDir(t);
  const started: Process[] = [];
  for (let index = 0; index < 2; index++) {
    const app = await testApp(t, {}, { store: 'postgres', dir, clock: new FakeClock() });
    await app.app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.app.server.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    started.push({ app, base: `http://127.0.0.1:${port}` });
  }
  return started as [Process, Process];
}

async function connect(t: ExecutionContext, process: Process): Promise<SseClient> {
  const { token } = await addOperator(process.app.ctx.store, `bench-${Math.random()}`, process.app.clock.now());
  const client = await openSse(t, process.base, '/api/operator/events', { authorization: `Bearer ${token}` });
  await flush(process);
  await client.next(ofEvent('snapshot'), 'the snapshot');
  return client;
}

async function flush(process: Process): Promise<void> {
  process.app.clock.advance(process.app.config.eventsFlushMs);
  await process.app.ctx.eventStream.flush();
}

const ofEvent = (event: string) => (message: SseMessage) => message.event === event;

/** A session on `process`, and its entrance's verified answer POSTed there; the log's id. */
async function sessionAndLog(process: Process, parking: SeededParking): Promise<{ sessionId: number; logId: number }> {
  const { accessToken } = await anotherDriver(process.app);
  const created = await createSession(process.app, accessToken, {
    parking_session: { secured_parking_id: parking.id },
  });
  const body = created.json<{ parking_session: { id: number }; smart_key: { id: number; access_command: string } }>();
  const userId = (await me(process.app, `Bearer ${accessToken}`)).json<{ id: number }>().id;
  const command = Buffer.from(body.smart_key.access_command, 'base64');
  const posted = await postBoxLogs(process.app, accessToken, {
    box_logs: [
      boxLog({
        foUserId: userId,
        smartKeyId: body.smart_key.id,
        box: parking.entrance,
        parkingId: parking.id,
        command,
        response: boxAnswer(parking.entrance, command, { status: Status.OK, barrier: Barrier.OPENING }),
      }),
    ],
  });
  if (posted.statusCode !== 201) throw new Error(`box log refused: ${posted.body}`);
  return {
    sessionId: body.parking_session.id,
    logId: posted.json<{ box_logs: { id: number }[] }>().box_logs[0]?.id ?? 0,
  };
}

/** The ids of every box log a client was sent in `box_logs` messages. */
function streamedLogIds(client: SseClient): number[] {
  return client.messages
    .filter(ofEvent('box_logs'))
    .flatMap((message) => (message.data as { box_logs: { id: number }[] }).box_logs.map((log) => log.id));
}

function streamedSessionIds(client: SseClient): number[] {
  return client.messages
    .filter(ofEvent('sessions'))
    .flatMap((message) => (message.data as { sessions: { id: number }[] }).sessions.map((session) => session.id));
}

/** Flushes `process` until its client was sent what `done` waits for. */
async function flushUntil(process: Process, done: () => boolean, what: string): Promise<void> {
  await waitFor(
    async () => {
      await flush(process);
      return done();
    },
    what,
    20_000,
  );
}

postgresTest(
  "a page on one process sees the box logs and sessions the other stores, with their rows' fields, and its own once",
  async (t) => {
    const [a, b] = await twoProcesses(t);
    const parking = await seedParking(b.app);
    const page = await connect(t, a);

    const there = await sessionAndLog(b, parking);
    await flushUntil(
      a,
      () => streamedLogIds(page).includes(there.logId) && streamedSessionIds(page).includes(there.sessionId),
      "the other process's box log and session on this one's stream",
    );
    const item = page.messages
      .filter(ofEvent('box_logs'))
      .flatMap((message) => (message.data as { box_logs: Record<string, unknown>[] }).box_logs)
      .find((log) => log['id'] === there.logId);
    t.like(item, {
      equipment_id: parking.entrance.moduleId,
      secured_parking_id: parking.id,
      session_id: there.sessionId,
      verified: true,
      status: 'OK',
      via: 'http',
    });
    t.is(typeof item?.['latency_ms'], 'number');

    const here = await sessionAndLog(a, parking);
    await flushUntil(a, () => streamedLogIds(page).includes(here.logId), "this process's own box log");
    // What came back from the channel is not pushed again.
    for (let round = 0; round < 5; round++) await flush(a);
    t.deepEqual(
      streamedLogIds(page).filter((id) => id === here.logId || id === there.logId),
      [there.logId, here.logId],
    );
    // And the other process's page sees this one's.
    const other = await connect(t, b);
    const later = await sessionAndLog(a, parking);
    await flushUntil(b, () => streamedLogIds(other).includes(later.logId), 'the log on the other page');
  },
);

postgresTest(
  'a cut listening connection gives its clients a snapshot, and the process listens again after RECONNECT_MS',
  async (t) => {
    const [a, b] = await twoProcesses(t);
    const parking = await seedParking(b.app);
    const page = await connect(t, a);
    const relay = a.app.ctx.eventRelay;
    if (relay === undefined) throw new Error('an app on PostgreSQL has a relay');

    const admin = new pg.Client({ connectionString: database().url });
    await admin.connect();
    t.teardown(() => admin.end());
    const cut = await admin.query<{ cut: boolean }>(
      'SELECT pg_terminate_backend(pid) AS cut FROM pg_stat_activity WHERE application_name = $1',
      [`parkbench events ${relay.origin}`],
    );
    t.deepEqual(
      cut.rows.map((row) => row.cut),
      [true],
      "the relay's one listening connection",
    );
    const snapshots = page.messages.filter(ofEvent('snapshot')).length;
    await flushUntil(a, () => page.messages.filter(ofEvent('snapshot')).length > snapshots, 'a snapshot after the cut');

    const listening = async (): Promise<boolean> =>
      (
        await admin.query('SELECT 1 FROM pg_stat_activity WHERE application_name = $1', [
          `parkbench events ${relay.origin}`,
        ])
      ).rowCount === 1;
    t.false(await listening(), 'not before RECONNECT_MS on its clock');
    a.app.clock.advance(RECONNECT_MS);
    await waitFor(listening, 'the relay listening again', 20_000);
    // Its (re)start marks a gap too: what the others sent meanwhile was missed.
    const afterReconnect = page.messages.filter(ofEvent('snapshot')).length;
    await flushUntil(
      a,
      () => page.messages.filter(ofEvent('snapshot')).length > afterReconnect,
      'a snapshot after listening again',
    );

    const there = await sessionAndLog(b, parking);
    await flushUntil(a, () => streamedLogIds(page).includes(there.logId), "the other process's log, once more");
  },
);
