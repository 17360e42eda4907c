import { createHash } from 'node:crypto';
import test from 'ava';
import { DRIVER, loggedIn, me, passwordGrant, register, testApp, type TestApp } from '../../helpers/api-app.js';

function token(app: TestApp, payload: Record<string, unknown> | string, headers: Record<string, string> = {}) {
  return app.app.inject({ method: 'POST', url: '/api/oauth/token', payload, headers });
}

const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

test('password grant: 200 with the spec 2.4 fields plus created_at, not cacheable', async (t) => {
  const app = await testApp(t);
  await register(app);
  const response = await passwordGrant(app);
  t.is(response.statusCode, 200);
  const body = response.json<Record<string, unknown>>();
  t.deepEqual(Object.keys(body).sort(), ['access_token', 'created_at', 'expires_in', 'refresh_token', 'token_type']);
  t.is(body.token_type, 'bearer');
  t.is(body.expires_in, 7200);
  t.is(body.created_at, Math.floor(app.clock.now() / 1000));
  t.regex(body.access_token as string, /^[A-Za-z0-9_-]{43}$/);
  t.not(body.access_token, body.refresh_token);
  t.is(response.headers['cache-control'], 'no-store');
  t.is(response.headers.pragma, 'no-cache');
  // Only hashes are stored.
  const row = await app.ctx.store.kysely.selectFrom('tokens').select('access_token_hash').executeTakeFirstOrThrow();
  t.is(row.access_token_hash.length, 32);
  t.deepEqual(
    row.access_token_hash,
    createHash('sha256')
      .update(body.access_token as string)
      .digest(),
  );
});

test('form-encoded with client_id (RFC 6749 names), and HTTP Basic', async (t) => {
  const app = await testApp(t);
  await register(app);
  const form = new URLSearchParams({
    grant_type: 'password',
    username: DRIVER.email,
    password: DRIVER.password,
    client_id: app.client.client_app_id,
    client_secret: app.client.client_secret,
  });
  const viaForm = await token(app, form.toString(), { 'content-type': 'application/x-www-form-urlencoded' });
  t.is(viaForm.statusCode, 200);
  const viaBasic = await token(
    app,
    new URLSearchParams({ grant_type: 'password', username: DRIVER.email, password: DRIVER.password }).toString(),
    {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: basic(app.client.client_app_id, app.client.client_secret),
    },
  );
  t.is(viaBasic.statusCode, 200);
});

test('expires_in follows TOKEN_TTL_SECONDS', async (t) => {
  const app = await testApp(t, { tokenTtlSeconds: 60 });
  await register(app);
  t.is((await passwordGrant(app)).json<{ expires_in: number }>().expires_in, 60);
});

test('invalid_client: 401, with WWW-Authenticate only when Basic was used', async (t) => {
  const app = await testApp(t);
  await register(app);
  const inBody = await token(app, {
    grant_type: 'password',
    username: DRIVER.email,
    password: DRIVER.password,
    client_app_id: app.client.client_app_id,
    client_secret: 'wrong',
  });
  t.is(inBody.statusCode, 401);
  t.deepEqual(inBody.json(), { error: 'invalid_client', error_description: 'Client authentication failed.' });
  t.is(inBody.headers['www-authenticate'], undefined);
  const missing = await token(app, { grant_type: 'password', username: DRIVER.email, password: DRIVER.password });
  t.is(missing.statusCode, 401);
  t.is(missing.json<{ error: string }>().error, 'invalid_client');
  const unknown = await token(app, {
    grant_type: 'password',
    username: DRIVER.email,
    password: DRIVER.password,
    client_app_id: 'nope',
    client_secret: 'x',
  });
  t.is(unknown.statusCode, 401);
  const viaBasic = await token(
    app,
    { grant_type: 'password', username: DRIVER.email, password: DRIVER.password },
    { authorization: basic(app.client.client_app_id, 'wrong') },
  );
  t.is(viaBasic.statusCode, 401);
  t.regex(viaBasic.headers['www-authenticate'] as string, /^Basic realm="parkbench"/);
  const garbled = await token(
    app,
    { grant_type: 'password', username: DRIVER.email, password: DRIVER.password },
    { authorization: 'Basic !!!' },
  );
  t.is(garbled.statusCode, 401);
  t.truthy(garbled.headers['www-authenticate']);
});

test('invalid_request: missing parameters, wrong types, two client methods, differing ids', async (t) => {
  const app = await testApp(t);
  const cases: Record<string, unknown>[] = [
    {},
    { grant_type: 'password', ...app.client },
    { grant_type: 'password', username: DRIVER.email, ...app.client },
    { grant_type: 'refresh_token', ...app.client },
    { grant_type: 5 },
    { grant_type: 'password', username: ['a'], password: 'x', ...app.client },
    { grant_type: 'password', username: 'a', password: 'b', client_app_id: 'a', client_id: 'b', client_secret: 'c' },
  ];
  for (const payload of cases) {
    const response = await token(app, payload);
    t.is(response.statusCode, 400, JSON.stringify(payload));
    t.is(response.json<{ error: string }>().error, 'invalid_request');
    t.is(typeof response.json<{ error_description: string }>().error_description, 'string');
  }
  const both = await token(
    app,
    { grant_type: 'password', username: 'a', password: 'b', ...app.client },
    { authorization: basic(app.client.client_app_id, app.client.client_secret) },
  );
  t.is(both.statusCode, 400);
  t.is(both.json<{ error: string }>().error, 'invalid_request');
  const noBody = await app.app.inject({ method: 'POST', url: '/api/oauth/token' });
  t.is(noBody.statusCode, 400);
  t.is(noBody.json<{ error: string }>().error, 'invalid_request');
  const repeated = await token(app, 'grant_type=password&grant_type=password&username=a&password=b', {
    'content-type': 'application/x-www-form-urlencoded',
  });
  t.is(repeated.statusCode, 400);
  const malformed = await token(app, '{"grant_type":', { 'content-type': 'application/json' });
  t.is(malformed.statusCode, 400);
  t.is(malformed.json<{ error: string }>().error, 'invalid_request');
});

test('unsupported_grant_type: 400', async (t) => {
  const app = await testApp(t);
  for (const grant of ['client_credentials', 'authorization_code', 'PASSWORD']) {
    const response = await token(app, { grant_type: grant, ...app.client });
    t.is(response.statusCode, 400);
    t.is(response.json<{ error: string }>().error, 'unsupported_grant_type');
  }
});

test('invalid_grant: wrong password or unknown user', async (t) => {
  const app = await testApp(t);
  await register(app);
  for (const [username, password] of [
    [DRIVER.email, 'wrong password'],
    ['nobody@example.com', DRIVER.password],
  ] as const) {
    const response = await passwordGrant(app, username, password);
    t.is(response.statusCode, 400);
    t.is(response.json<{ error: string }>().error, 'invalid_grant');
    t.is(response.headers['cache-control'], 'no-store');
  }
  t.is((await passwordGrant(app, 'ADA@EXAMPLE.COM')).statusCode, 200, 'usernames are case-insensitive');
});

test('415 for a body that is neither JSON nor a form', async (t) => {
  const app = await testApp(t);
  const response = await token(app, 'grant_type=password', { 'content-type': 'text/plain' });
  t.is(response.statusCode, 415);
  t.is(response.json<{ error: string }>().error, 'unsupported_media_type');
});

test('413 for a body over the limit', async (t) => {
  const app = await testApp(t, { bodyLimitBytes: 2048 });
  const response = await token(app, { grant_type: 'password', username: 'x'.repeat(4000) });
  t.is(response.statusCode, 413);
  t.is(response.json<{ error: string }>().error, 'invalid_request');
});

test('refresh_token grant rotates: the old refresh and access tokens stop working', async (t) => {
  const app = await testApp(t);
  const first = await loggedIn(app);
  const refreshed = await token(app, {
    grant_type: 'refresh_token',
    refresh_token: first.refresh_token,
    ...app.client,
  });
  t.is(refreshed.statusCode, 200);
  const second = refreshed.json<{ access_token: string; refresh_token: string; token_type: string }>();
  t.is(second.token_type, 'bearer');
  t.not(second.refresh_token, first.refresh_token);
  t.is((await me(app, `Bearer ${second.access_token}`)).statusCode, 200);
  t.is((await me(app, `Bearer ${first.access_token}`)).statusCode, 401);
  const reused = await token(app, { grant_type: 'refresh_token', refresh_token: first.refresh_token, ...app.client });
  t.is(reused.statusCode, 400);
  t.is(reused.json<{ error: string }>().error, 'invalid_grant');
});

test("refresh_token grant: unknown, expired, or another client's token is invalid_grant; wrong client secret is invalid_client", async (t) => {
  const app = await testApp(t, { refreshTokenTtlSeconds: 60 });
  const first = await loggedIn(app);
  t.is(
    (await token(app, { grant_type: 'refresh_token', refresh_token: 'unknown', ...app.client })).json<{
      error: string;
    }>().error,
    'invalid_grant',
  );
  t.is(
    (
      await token(app, {
        grant_type: 'refresh_token',
        refresh_token: first.refresh_token,
        client_app_id: app.client.client_app_id,
        client_secret: 'no',
      })
    ).statusCode,
    401,
  );

  const { hashSecret } = await import('../../../api/auth/secrets.js');
  const { ClientAppRepository } = await import('../../../api/auth/client-apps-repository.js');
  await new ClientAppRepository(app.ctx.store).insert('other', 'other-client', await hashSecret('other-secret', 10), 0);
  const other = await token(app, {
    grant_type: 'refresh_token',
    refresh_token: first.refresh_token,
    client_app_id: 'other-client',
    client_secret: 'other-secret',
  });
  t.is(other.statusCode, 400);
  t.is(other.json<{ error: string }>().error, 'invalid_grant');

  app.clock.advance(60_000);
  const expired = await token(app, { grant_type: 'refresh_token', refresh_token: first.refresh_token, ...app.client });
  t.is(expired.statusCode, 400);
  t.is(expired.json<{ error: string }>().error, 'invalid_grant');
});

test('concurrent uses of one refresh token: exactly one succeeds', async (t) => {
  const app = await testApp(t);
  const first = await loggedIn(app);
  const responses = await Promise.all(
    [1, 2, 3].map(() => token(app, { grant_type: 'refresh_token', refresh_token: first.refresh_token, ...app.client })),
  );
  t.deepEqual(responses.map((response) => response.statusCode).sort(), [200, 400, 400]);
});
