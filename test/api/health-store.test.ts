// GET /health on both stores (issue 18): the count of migrations applied,
// read through the store (PostgreSQL records the baseline as SQLite's
// versions, so both count the same).
import test from 'ava';
import Fastify from 'fastify';
import { MIGRATIONS } from '../../api/db/migrations.js';
import { healthRoutes } from '../../api/routes/health.js';
import { storeTests } from '../helpers/stores.js';

const storeTest = storeTests(test);

storeTest('GET /health: ok and the migrations applied', async (t, store) => {
  const app = Fastify();
  t.teardown(() => app.close());
  healthRoutes(app, { store });
  const response = await app.inject({ method: 'GET', url: '/health' });
  t.is(response.statusCode, 200);
  t.deepEqual(response.json(), { status: 'ok', migrations: MIGRATIONS.length });
});
