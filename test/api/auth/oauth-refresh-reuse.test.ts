// RFC 9700 (OAuth 2.0 Security BCP) 4.14.2: a rotated refresh token used again
// revokes every token descended from it, the whole family.
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import test from 'ava';
import Database from 'better-sqlite3';
import { hashIssuedSecret, tokenHash } from '../../../api/auth/secrets.js';
import { MIGRATIONS } from '../../../api/db/migrations/index.js';
import { migrate } from '../../../api/db/migrate-sqlite.js';
import { loggedIn, me, passwordGrant, tempDir, testApp, type TestApp, type Tokens } from '../../helpers/api-app.js';

function refresh(app: TestApp, refreshToken: string) {
  return app.app.inject({
    method: 'POST',
    url: '/api/oauth/token',
    payload: { grant_type: 'refresh_token', refresh_token: refreshToken, ...app.client },
  });
}

async function refreshed(
  t: { is: (a: unknown, b: unknown) => void },
  app: TestApp,
  refreshToken: string,
): Promise<Tokens> {
  const response = await refresh(app, refreshToken);
  t.is(response.statusCode, 200);
  return response.json<Tokens>();
}

for (const replayed of [0, 1]) {
  test(`replaying R${replayed} of a chain R0 -> R1 -> R2 revokes R2 and its access token, not another login's`, async (t) => {
    const app = await testApp(t);
    const r0 = await loggedIn(app);
    const other = (await passwordGrant(app)).json<Tokens>();
    const r1 = await refreshed(t, app, r0.refresh_token);
    const r2 = await refreshed(t, app, r1.refresh_token);
    // Looked up once, so the access token sits in the bearer cache.
    t.is((await me(app, `Bearer ${r2.access_token}`)).statusCode, 200);
    t.true(app.ctx.bearerCache.size > 0);

    const replay = await refresh(app, (replayed === 0 ? r0 : r1).refresh_token);
    t.is(replay.statusCode, 400);
    t.is(replay.json<{ error: string }>().error, 'invalid_grant');

    t.is((await me(app, `Bearer ${r2.access_token}`)).statusCode, 401, 'the newest access token is revoked at once');
    const lastRefresh = await refresh(app, r2.refresh_token);
    t.is(lastRefresh.statusCode, 400);
    t.is(lastRefresh.json<{ error: string }>().error, 'invalid_grant');
    // The same user's other login is another family: untouched.
    t.is((await me(app, `Bearer ${other.access_token}`)).statusCode, 200);
    t.is((await refresh(app, other.refresh_token)).statusCode, 200);
  });
}

test('a token of a family revoked by reuse stays revoked when refreshed concurrently', async (t) => {
  const app = await testApp(t);
  const r0 = await loggedIn(app);
  const r1 = await refreshed(t, app, r0.refresh_token);
  t.is((await refresh(app, r0.refresh_token)).statusCode, 400);
  const responses = await Promise.all([refresh(app, r1.refresh_token), refresh(app, r1.refresh_token)]);
  t.deepEqual(
    responses.map((response) => response.statusCode),
    [400, 400],
  );
  t.is((await me(app, `Bearer ${r1.access_token}`)).statusCode, 401);
});

test("two concurrent uses of one refresh token: one wins, and the loser, a reuse, revokes the winner's tokens", async (t) => {
  const app = await testApp(t);
  const r0 = await loggedIn(app);
  const responses = await Promise.all([refresh(app, r0.refresh_token), refresh(app, r0.refresh_token)]);
  t.deepEqual(responses.map((response) => response.statusCode).sort(), [200, 400]);
  const won = responses.find((response) => response.statusCode === 200);
  if (won === undefined) return t.fail('no refresh answered 200');
  const winner = won.json<Tokens>();
  t.is((await me(app, `Bearer ${winner.access_token}`)).statusCode, 401);
  t.is((await refresh(app, winner.refresh_token)).statusCode, 400);
});

test('revoking a pair (RFC 7009) and then presenting its refresh token leaves other logins alone', async (t) => {
  const app = await testApp(t);
  const first = await loggedIn(app);
  const other = (await passwordGrant(app)).json<Tokens>();
  await app.app.inject({
    method: 'POST',
    url: '/api/oauth/revoke',
    payload: { token: first.refresh_token, ...app.client },
  });
  t.is((await refresh(app, first.refresh_token)).statusCode, 400);
  t.is((await me(app, `Bearer ${other.access_token}`)).statusCode, 200);
});

test('pairs issued before token families each become a family of their own (SQLite: a file from before that migration; PostgreSQL starts past it)', async (t) => {
  const dir = tempDir(t);
  const path = join(dir, 'db', 'test.sqlite');
  mkdirSync(dirname(path), { recursive: true });
  const old = new Database(path);
  migrate(
    old,
    MIGRATIONS.filter((migration) => migration.name !== 'token families'),
  );
  old
    .prepare(
      "INSERT INTO client_apps (id, name, client_app_id, client_secret_hash, created_at) VALUES (1, 'test', 'test-client', ?, 0)",
    )
    .run(hashIssuedSecret('test-secret-0123456789'));
  old
    .prepare(
      "INSERT INTO users (id, email, password_hash, first_name, last_name, phone, created_at) VALUES (1, 'old@example.com', 'x', 'O', 'D', '1', 0)",
    )
    .run();
  const insert = old.prepare(
    'INSERT INTO tokens (user_id, client_app_id, access_token_hash, refresh_token_hash, access_expires_at, refresh_expires_at, created_at) VALUES (1, 1, ?, ?, ?, ?, 0)',
  );
  const far = Date.UTC(2030, 0, 1);
  for (const name of ['a', 'b']) insert.run(tokenHash(`access-${name}`), tokenHash(`refresh-${name}`), far, far);
  old.close();

  const app = await testApp(t, {}, { dir, store: 'sqlite' });
  const a1 = await refreshed(t, app, 'refresh-a');
  t.is((await refresh(app, 'refresh-a')).statusCode, 400);
  t.is(
    (await me(app, `Bearer ${a1.access_token}`)).statusCode,
    401,
    'the upgraded pair and its descendant are one family',
  );
  t.is((await me(app, 'Bearer access-b')).statusCode, 200, 'the other upgraded pair is another');
});
