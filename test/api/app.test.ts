import { readFileSync } from 'node:fs';
import test from 'ava';
import { databaseShown } from '../../api/config/index.js';
import { MIGRATIONS } from '../../api/db/migrations/index.js';
import { API_ERRORS, OAUTH_ERRORS } from '../../api/http/errors.js';
import { errorBody, sqliteConnection, testApp } from '../helpers/api-app.js';

test('GET /health: 200 once the database is open and migrated', async (t) => {
  const app = await testApp(t);
  const response = await app.app.inject({ method: 'GET', url: '/health' });
  t.is(response.statusCode, 200);
  t.deepEqual(response.json(), { status: 'ok', migrations: MIGRATIONS.length, database: databaseShown(app.config) });
});

test('the database folder is created, in WAL mode, and migrations run once (SQLite: its file)', async (t) => {
  const app = await testApp(t, {}, { store: 'sqlite' });
  t.is(sqliteConnection(app).pragma('journal_mode', { simple: true }), 'wal');
  const { openDatabase } = await import('../../api/db/open.js');
  const again = openDatabase(app.config.databasePath);
  t.is((again.prepare('SELECT count(*) AS n FROM migrations').get() as { n: number }).n, MIGRATIONS.length);
  again.close();
});

test('GET /openapi.json is OpenAPI 3 with every route; /docs is browsable', async (t) => {
  const app = await testApp(t);
  const response = await app.app.inject({ method: 'GET', url: '/openapi.json' });
  t.is(response.statusCode, 200);
  const document = response.json<{ openapi: string; paths: Record<string, unknown> }>();
  t.regex(document.openapi, /^3\./);
  for (const path of ['/health', '/api/car_driver', '/api/car_driver/me', '/api/oauth/token', '/api/oauth/revoke'])
    t.truthy(document.paths[path], path);
  const docs = await app.app.inject({ method: 'GET', url: '/docs' });
  t.is(docs.statusCode, 200);
  t.regex(docs.body, /swagger/i);
});

test('every error code is documented in the API reference (docs/api.md) and in the OpenAPI document', async (t) => {
  const app = await testApp(t);
  const openapi = (await app.app.inject({ method: 'GET', url: '/openapi.json' })).body;
  const reference = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
  // The rows of its Errors section: from that heading to the next one of the same level.
  const errorsSection = /^## Errors\n([\s\S]*?)(?=^## |(?![\s\S]))/m.exec(reference)?.[1] ?? '';
  for (const code of [...Object.keys(API_ERRORS), ...Object.keys(OAUTH_ERRORS)]) {
    t.true(errorsSection.includes(`| \`${code}\` |`), `docs/api.md, Errors, lacks a row for ${code}`);
    t.true(openapi.includes(`\`${code}\``), `OpenAPI lacks ${code}`);
  }
});

test('unknown routes: 404 with the error body', async (t) => {
  const app = await testApp(t);
  const response = await app.app.inject({ method: 'GET', url: '/api/nothing?x=1' });
  t.is(response.statusCode, 404);
  t.is(errorBody(t, response).error, 'not_found');
});

test('malformed JSON: 400; empty JSON body: 400; prototype poisoning: 400', async (t) => {
  const app = await testApp(t);
  for (const payload of ['{"a":', '', '{"__proto__": {"x": 1}}', '{"constructor": {"prototype": {"x": 1}}}']) {
    const response = await app.app.inject({
      method: 'POST',
      url: '/api/car_driver',
      payload,
      headers: { 'content-type': 'application/json' },
    });
    t.is(response.statusCode, 400, payload);
    t.is(errorBody(t, response).error, 'malformed_json');
  }
});

test('a body over BODY_LIMIT_BYTES: 413', async (t) => {
  const app = await testApp(t, { bodyLimitBytes: 4096 });
  const response = await app.app.inject({ method: 'POST', url: '/api/car_driver', payload: { pad: 'x'.repeat(5000) } });
  t.is(response.statusCode, 413);
  t.is(errorBody(t, response).error, 'body_too_large');
});

test('a body that is not JSON on a JSON route: 415', async (t) => {
  const app = await testApp(t);
  for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
    const response = await app.app.inject({
      method: 'POST',
      url: '/api/car_driver',
      payload: 'a=b',
      headers: { 'content-type': type },
    });
    t.is(response.statusCode, 415, type);
    t.is(errorBody(t, response).error, 'unsupported_media_type');
  }
});
