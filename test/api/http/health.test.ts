// GET /health on both stores: the count of migrations applied, read through
// the store (PostgreSQL records the baseline as SQLite's versions, so both
// count the same), and the database in use, named without its password.
import { resolve } from 'node:path';
import test from 'ava';
import Fastify from 'fastify';
import { parsePostgresUrl } from '../../../api/config/index.js';
import { MIGRATIONS } from '../../../api/db/migrations/index.js';
import { healthRoutes } from '../../../api/http/health.js';
import { testApp } from '../../helpers/api-app.js';
import { storeTests } from '../../helpers/stores.js';

const storeTest = storeTests(test);

storeTest('GET /health: ok and the migrations applied', async (t, store) => {
  const app = Fastify();
  t.teardown(() => app.close());
  healthRoutes(app, { store, config: { databasePath: 'data/parkbench.sqlite', databaseUrl: undefined } });
  const response = await app.inject({ method: 'GET', url: '/health' });
  t.is(response.statusCode, 200);
  t.deepEqual(response.json(), {
    status: 'ok',
    migrations: MIGRATIONS.length,
    database: resolve('data/parkbench.sqlite'),
  });
});

test('GET /health names the database the app runs on: the file, or the URL without its password', async (t) => {
  const { app, config, databaseEnv } = await testApp(t);
  const body = (await app.inject({ method: 'GET', url: '/health' })).json<{ database: string }>();
  const url = databaseEnv.DATABASE_URL;
  if (url === undefined) {
    t.is(body.database, resolve(config.databasePath));
  } else {
    t.is(body.database, parsePostgresUrl(url).shown);
    const password = new URL(url).password;
    if (password !== '') t.false(body.database.includes(password));
  }
});

test('GET /health never shows a PostgreSQL password', async (t) => {
  const app = Fastify();
  t.teardown(() => app.close());
  const config = { databasePath: 'unused', databaseUrl: parsePostgresUrl('postgres://park:hunter2@db.example/bench') };
  healthRoutes(app, { store: (await testApp(t)).ctx.store, config });
  const body = (await app.inject({ method: 'GET', url: '/health' })).json<{ database: string }>();
  t.is(body.database, 'postgres://park:***@db.example/bench');
});
