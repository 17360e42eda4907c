// Another process holding the database's write lock past busy_timeout (an
// operator command on the same file) is no bug: writes answer 503 with
// Retry-After and write nothing; reads go on (WAL); once the lock is
// released, the same requests succeed.
import test from 'ava';
import {
  DRIVER,
  errorBody,
  loggedIn,
  passwordGrant,
  register,
  sqliteConnection,
  testApp,
} from '../../helpers/api-app.js';
import { holdWriteLock } from '../../helpers/database-lock.js';
import { boxLog, countRows, postBoxLogs } from '../../helpers/box-logs.js';
import { createSession, seedParking } from '../../helpers/parking.js';

test('writes wait busy_timeout, then answer 503 database_busy with Retry-After; OAuth answers temporarily_unavailable (SQLite: its busy timeout and file lock)', async (t) => {
  // Not 5 s a request in a test: the wait itself is SQLite's.
  const app = await testApp(t, { databaseBusyTimeoutMs: 50 }, { store: 'sqlite' });
  t.is(sqliteConnection(app).pragma('busy_timeout', { simple: true }), 50, 'DATABASE_BUSY_TIMEOUT_MS reaches SQLite');
  const tokens = await loggedIn(app);
  const parking = await seedParking(app);
  const release = holdWriteLock(t, app.config.databasePath);

  const registration = await register(app, { ...DRIVER, email: 'grace@example.com' });
  t.is(registration.statusCode, 503);
  t.is(registration.headers['retry-after'], '1');
  t.is(errorBody(t, registration).error, 'database_busy');

  const log = boxLog({
    foUserId: 1,
    smartKeyId: null,
    box: parking.entrance,
    parkingId: parking.id,
    command: null,
    response: null,
    type: 'control',
  });
  const logs = await postBoxLogs(app, tokens.access_token, { box_logs: [log] });
  t.is(logs.statusCode, 503);
  t.is(errorBody(t, logs).error, 'database_busy');

  const login = await passwordGrant(app);
  t.is(login.statusCode, 503);
  t.is(login.headers['retry-after'], '1');
  t.is(login.json<{ error: string }>().error, 'temporarily_unavailable');

  // Reads are not blocked by a writer in WAL mode.
  t.is(
    (
      await app.app.inject({
        method: 'GET',
        url: '/api/car_driver/me',
        headers: { authorization: `Bearer ${tokens.access_token}` },
      })
    ).statusCode,
    200,
  );

  release();
  t.is(await countRows(app, 'box_logs'), 0, 'nothing was written while busy');
  t.is((await register(app, { ...DRIVER, email: 'grace@example.com' })).statusCode, 201);
  t.is((await postBoxLogs(app, tokens.access_token, { box_logs: [log] })).statusCode, 201);
  t.is((await passwordGrant(app)).statusCode, 200);
});

test('the payment form under a busy database: a 503 page with Retry-After, the payment still pending; paying afterwards works (SQLite: its file lock)', async (t) => {
  const app = await testApp(t, { databaseBusyTimeoutMs: 50 }, { store: 'sqlite' });
  const tokens = await loggedIn(app);
  const parking = await seedParking(app);
  const created = await createSession(app, tokens.access_token, {
    parking_session: { secured_parking_id: parking.id },
  });
  const path = new URL(created.json<{ pay_url: string }>().pay_url).pathname;
  const pay = () =>
    app.app.inject({
      method: 'POST',
      url: path,
      payload: new URLSearchParams({ action: 'pay', card_number: '4242 4242 4242 4242', expiry: '12/30' }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
  const release = holdWriteLock(t, app.config.databasePath);
  const busy = await pay();
  t.is(busy.statusCode, 503);
  t.is(busy.headers['retry-after'], '1');
  t.regex(busy.headers['content-type'] as string, /^text\/html/);
  t.regex(busy.body, /busy and nothing was recorded/);
  release();
  t.is(sqliteConnection(app).prepare('SELECT state FROM payments').pluck().get(), 'pending');
  const paid = await pay();
  t.is(paid.statusCode, 200);
  t.is(sqliteConnection(app).prepare('SELECT state FROM payments').pluck().get(), 'paid');
});
