// MQTT ingestion through the group commit (api/mqtt/response-ingester.ts,
// api/db/group-commit.ts): messages arriving together share one transaction
// (with the HTTP batches of the same turn), each in a savepoint of its own
// and settled only after its log is committed; a message that fails costs
// its neighbours nothing; a busy database acknowledges nothing until it stored.
import test from 'ava';
import { BUSY_RETRY_MS, ResponseIngestion } from '../../../api/mqtt/response-ingester.js';
import type { Provisioning } from '../../../lib/provisioning-file.js';
import { testApp, type TestApp } from '../../helpers/api-app.js';
import { holdWriteLock } from '../../helpers/database-lock.js';
import { seedParking } from '../../helpers/parking.js';
import { makeVerifiedResponses } from '../../../simulator/verified-responses.js';
import { column } from '../../helpers/sql.js';
import { refuseBoxLogInsert } from '../../helpers/refuse-box-log.js';

async function bench(
  t: Parameters<typeof testApp>[0],
  store?: 'sqlite',
): Promise<{ app: TestApp; moduleId: number; responses: Awaited<ReturnType<typeof makeVerifiedResponses>> }> {
  // A busy database is waited for 20 ms here, not 5 s.
  const app = await testApp(t, { databaseBusyTimeoutMs: 20 }, store === undefined ? {} : { store });
  const parking = await seedParking(app);
  const box = parking.entrance;
  const provisioning: Provisioning = {
    moduleId: box.moduleId,
    parkingId: parking.id,
    direction: box.direction,
    macAddress: box.macAddress,
    parkingKey: parking.parkingKey,
    parkingKeyNext: null,
    boxKey: box.boxKey,
    skewSeconds: 120,
    minBatteryMv: 3_300,
    mqtt: null,
  };
  return { app, moduleId: box.moduleId, responses: await makeVerifiedResponses(provisioning, 6, app.clock.now()) };
}

/** The transactions a group with a failing message takes: on SQLite one
 * (each message in a savepoint of it when run again alone); on PostgreSQL,
 * where a savepoint is a round trip, the group's, then one a message. */
const transactionsOfFailedGroup = (app: TestApp): number =>
  app.ctx.store.dialect === 'sqlite' ? 1 : 1 + app.ctx.groupCommit.ranAlone;

const verifiedSeqs = async (app: TestApp): Promise<number[]> =>
  await column<number>(app.ctx.store, 'SELECT box_seq FROM box_logs WHERE verified = 1 ORDER BY box_seq');

test('messages of one turn are one group, settled only once their logs are committed', async (t) => {
  const { app, moduleId, responses } = await bench(t);
  const ingestion = new ResponseIngestion(app.ctx);
  const before = { ...app.ctx.groupCommit.counters };
  const settled = responses.map((response) => ingestion.ingest(moduleId, Buffer.from(response.payload)));
  t.deepEqual(await verifiedSeqs(app), [], 'nothing written before the turn ends');
  await Promise.all(settled);
  t.deepEqual(
    await verifiedSeqs(app),
    responses.map((response) => response.boxSeq).sort((a, b) => a - b),
  );
  t.deepEqual(app.ctx.groupCommit.counters, { groups: before.groups + 1, units: before.units + responses.length });
});

test('a message that fails in the batch (a real database error) or cannot become a log costs its neighbours nothing', async (t) => {
  const { app, moduleId, responses } = await bench(t);
  const doomed = responses[2]?.boxSeq ?? -1;
  // A real failure for one row in the middle of the batch.
  await refuseBoxLogInsert(app.ctx.store, doomed, 'refused by the test');
  const ingestion = new ResponseIngestion(app.ctx);
  const groups = app.ctx.groupCommit.counters.groups;
  await Promise.all([
    ingestion.ingest(moduleId, Buffer.from('not json')),
    ...responses.map((response) => ingestion.ingest(moduleId, Buffer.from(response.payload))),
    ingestion.ingest(4_000_000, Buffer.from(responses[0]?.payload ?? '')),
  ]);
  t.deepEqual(
    await verifiedSeqs(app),
    responses
      .map((response) => response.boxSeq)
      .filter((seq) => seq !== doomed)
      .sort((a, b) => a - b),
  );
  t.like(ingestion.counters, {
    stored: responses.length - 1,
    duplicates: 0,
    refused: { not_json: 1, no_command: 0, unknown_box: 1, refused_by_api: 0, failed: 1 },
  });
  t.is(
    app.ctx.groupCommit.counters.groups,
    groups + transactionsOfFailedGroup(app),
    'SQLite: one transaction, the failed message rolled back to its savepoint alone; PostgreSQL: the group, then each message alone',
  );
});

test('a redelivered message in the same batch as its first copy is stored once', async (t) => {
  const { app, moduleId, responses } = await bench(t);
  const ingestion = new ResponseIngestion(app.ctx);
  const payload = Buffer.from(responses[0]?.payload ?? '');
  await Promise.all([ingestion.ingest(moduleId, payload), ingestion.ingest(moduleId, payload)]);
  t.is((await verifiedSeqs(app)).length, 1);
  t.like(ingestion.counters, { stored: 1, duplicates: 1 });
});

const turn = () => new Promise((resolve) => setImmediate(resolve));

test('a busy database acknowledges nothing: the batch waits BUSY_RETRY_MS on the clock, then is stored (SQLite: its file lock)', async (t) => {
  const { app, moduleId, responses } = await bench(t, 'sqlite');
  const ingestion = new ResponseIngestion(app.ctx);
  const release = holdWriteLock(t, app.config.databasePath);
  let settled = 0;
  const all = responses.map((response) =>
    ingestion.ingest(moduleId, Buffer.from(response.payload)).then(() => (settled += 1)),
  );
  await turn();
  await turn();
  t.is(settled, 0, 'no message settled (no PUBACK) while the database is busy');
  t.like(ingestion.counters, { stored: 0, busy: responses.length, refused: { failed: 0 } });
  app.clock.advance(BUSY_RETRY_MS);
  await turn();
  await turn();
  t.is(settled, 0, 'still busy: put off again');
  release();
  app.clock.advance(BUSY_RETRY_MS);
  await Promise.all(all);
  t.deepEqual(
    await verifiedSeqs(app),
    responses.map((response) => response.boxSeq).sort((a, b) => a - b),
  );
  t.like(ingestion.counters, { stored: responses.length, busy: 2 * responses.length, refused: { failed: 0 } });
});

test('one message at a time: a busy database holds its acknowledgement until the log is stored (SQLite: its file lock)', async (t) => {
  const { app, moduleId, responses } = await bench(t, 'sqlite');
  const ingestion = new ResponseIngestion(app.ctx);
  const release = holdWriteLock(t, app.config.databasePath);
  let settled = false;
  const done = ingestion.ingest(moduleId, Buffer.from(responses[0]?.payload ?? '')).then(() => (settled = true));
  await turn();
  t.false(settled);
  t.is((await verifiedSeqs(app)).length, 0);
  release();
  app.clock.advance(BUSY_RETRY_MS);
  await done;
  t.is((await verifiedSeqs(app)).length, 1);
  t.like(ingestion.counters, { stored: 1, busy: 1, refused: { failed: 0 } });
});

test('an MQTT message and an HTTP batch of one turn go through one batching path (one transaction on SQLite)', async (t) => {
  const { app, moduleId, responses } = await bench(t);
  const ingestion = new ResponseIngestion(app.ctx);
  const before = { ...app.ctx.groupCommit.counters };
  // What POST /api/box_logs hands the group commit; here a unit that writes nothing.
  await Promise.all([
    ingestion.ingest(moduleId, Buffer.from(responses[0]?.payload ?? '')),
    app.ctx.groupCommit.run(() => 'an HTTP batch'),
  ]);
  // One transaction on SQLite; on PostgreSQL an HTTP batch has one of its own (api/db/group-commit.ts).
  const groups = app.ctx.store.dialect === 'sqlite' ? 1 : 2;
  t.deepEqual(app.ctx.groupCommit.counters, { groups: before.groups + groups, units: before.units + 2 });
  t.is((await verifiedSeqs(app)).length, 1);
});

test('a response message off lib/mqtt-messages.ts (bad response, via, error or context) is counted as bad_field, stored nowhere', async (t) => {
  const { app, moduleId, responses } = await bench(t);
  const ingestion = new ResponseIngestion(app.ctx);
  const good = JSON.parse(responses[0]?.payload ?? '{}') as Record<string, unknown>;
  const bad = [
    { response: 'not base64!' },
    { via: 'pigeon' },
    { error: 'on fire' },
    { context: { smart_key_id: '7' } },
    { context: [] },
    { context: { request_id: 'x'.repeat(201) } },
  ];
  await Promise.all(
    bad.map((change) => ingestion.ingest(moduleId, Buffer.from(JSON.stringify({ ...good, ...change })))),
  );
  t.is((await verifiedSeqs(app)).length, 0);
  t.like(ingestion.counters, { stored: 0, refused: { bad_field: bad.length, failed: 0 } });
  // The same message as it should be is stored.
  await ingestion.ingest(moduleId, Buffer.from(JSON.stringify(good)));
  t.like(ingestion.counters, { stored: 1 });
});

test('the messages of one turn are stored by one ingestBoxLogs call: their box read once, its observation written once', async (t) => {
  const { app, moduleId, responses } = await bench(t);
  const ingestion = new ResponseIngestion(app.ctx);
  // Counts the real ingestion store's reads and writes (no stand-in).
  const rows = app.ctx.ingestStore;
  const counted = { reads: 0, boxesRead: 0, observationWrites: 0, observations: 0 };
  const [boxesOf, noteObservations] = [rows.boxes.bind(rows), rows.noteObservations.bind(rows)];
  rows.boxes = (on, ids) => (counted.reads++, (counted.boxesRead += ids.length), boxesOf(on, ids));
  rows.noteObservations = (on, observations) => {
    counted.observationWrites++;
    counted.observations += observations.length;
    return noteObservations(on, observations);
  };
  t.teardown(() => Object.assign(rows, { boxes: boxesOf, noteObservations }));
  await Promise.all(responses.map((response) => ingestion.ingest(moduleId, Buffer.from(response.payload))));
  t.is((await verifiedSeqs(app)).length, responses.length);
  t.deepEqual(counted, { reads: 1, boxesRead: 1, observationWrites: 1, observations: 1 });
  t.is(app.ctx.groupCommit.ranAlone, 0);
});

test('a poison message among good ones in one turn: the good ones are stored once, the poison is counted, nothing of it is written', async (t) => {
  const { app, moduleId, responses } = await bench(t);
  const poison = responses[3]?.boxSeq ?? -1;
  // Fails at the poison's insert, after its neighbours of the batch were written.
  await refuseBoxLogInsert(app.ctx.store, poison, 'poison');
  const ingestion = new ResponseIngestion(app.ctx);
  const groups = app.ctx.groupCommit.counters.groups;
  const taken: (number | undefined)[] = [];
  ingestion.onResponse((response) => taken.push(response.log?.id));
  await Promise.all(responses.map((response) => ingestion.ingest(moduleId, Buffer.from(response.payload))));
  const rows = await column<number>(app.ctx.store, 'SELECT box_seq FROM box_logs ORDER BY box_seq');
  t.deepEqual(
    rows,
    responses
      .map((response) => response.boxSeq)
      .filter((seq) => seq !== poison)
      .sort((a, b) => a - b),
    'each good one once, no row of the poison',
  );
  t.like(ingestion.counters, { stored: responses.length - 1, duplicates: 0, refused: { failed: 1 } });
  t.is(taken.length, responses.length - 1, 'listeners told of each stored log');
  t.is(app.ctx.groupCommit.ranAlone, responses.length, 'the batch failed once, then each message alone');
  t.is(app.ctx.groupCommit.counters.groups, groups + transactionsOfFailedGroup(app));
  t.is(
    (await app.ctx.boxes.learned(moduleId))?.last_box_seq,
    Math.max(...rows),
    'the box observation is of the stored logs',
  );
});

test('messages are counted in the order they arrived: one refused at parse waits for the messages ahead of it', async (t) => {
  const { app, moduleId, responses } = await bench(t);
  const ingestion = new ResponseIngestion(app.ctx);
  const ahead = responses.map((response) => ingestion.ingest(moduleId, Buffer.from(response.payload)));
  let storedWhenCounted = -1;
  const marker = ingestion
    .ingest(moduleId, Buffer.from('marker, not json'))
    .then(() => (storedWhenCounted = ingestion.counters.stored));
  t.is(ingestion.counters.refused.not_json, 0, 'not counted before the turn ends');
  await Promise.all([...ahead, marker]);
  t.is(ingestion.counters.refused.not_json, 1);
  t.is(storedWhenCounted, responses.length, 'every message ahead of it was stored when it was counted');
});
