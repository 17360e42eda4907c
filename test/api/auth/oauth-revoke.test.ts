import test from 'ava';
import { loggedIn, me, testApp, type TestApp } from '../../helpers/api-app.js';

function revoke(app: TestApp, payload: Record<string, unknown>, headers: Record<string, string> = {}) {
  return app.app.inject({ method: 'POST', url: '/api/oauth/revoke', payload, headers });
}

test('revoking the access token ends the pair: 200, empty body', async (t) => {
  const app = await testApp(t);
  const tokens = await loggedIn(app);
  const response = await revoke(app, { token: tokens.access_token, ...app.client });
  t.is(response.statusCode, 200);
  t.is(response.body, '');
  t.is((await me(app, `Bearer ${tokens.access_token}`)).statusCode, 401);
  const refresh = await app.app.inject({
    method: 'POST',
    url: '/api/oauth/token',
    payload: { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, ...app.client },
  });
  t.is(refresh.statusCode, 400);
});

test('revoking the refresh token (form-encoded, with a hint) ends the access token too', async (t) => {
  const app = await testApp(t);
  const tokens = await loggedIn(app);
  const form = new URLSearchParams({
    token: tokens.refresh_token,
    token_type_hint: 'refresh_token',
    client_id: app.client.client_app_id,
    client_secret: app.client.client_secret,
  });
  const response = await app.app.inject({
    method: 'POST',
    url: '/api/oauth/revoke',
    payload: form.toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  t.is(response.statusCode, 200);
  t.is((await me(app, `Bearer ${tokens.access_token}`)).statusCode, 401);
});

test('200 for an unknown or already revoked token', async (t) => {
  const app = await testApp(t);
  const tokens = await loggedIn(app);
  t.is((await revoke(app, { token: 'never-issued', ...app.client })).statusCode, 200);
  t.is((await revoke(app, { token: tokens.access_token, ...app.client })).statusCode, 200);
  t.is((await revoke(app, { token: tokens.access_token, ...app.client })).statusCode, 200);
});

test('another client cannot revoke the token: 200, and the token still works', async (t) => {
  const app = await testApp(t);
  const tokens = await loggedIn(app);
  const { hashSecret } = await import('../../../api/auth/secrets.js');
  const { ClientAppRepository } = await import('../../../api/auth/client-apps-repository.js');
  await new ClientAppRepository(app.ctx.store).insert('other', 'other-client', await hashSecret('other-secret', 10), 0);
  t.is(
    (await revoke(app, { token: tokens.access_token, client_app_id: 'other-client', client_secret: 'other-secret' }))
      .statusCode,
    200,
  );
  t.is((await me(app, `Bearer ${tokens.access_token}`)).statusCode, 200);
});

test('400 without a token, 401 with a bad client', async (t) => {
  const app = await testApp(t);
  const missing = await revoke(app, { ...app.client });
  t.is(missing.statusCode, 400);
  t.is(missing.json<{ error: string }>().error, 'invalid_request');
  const bad = await revoke(app, { token: 'x', client_app_id: app.client.client_app_id, client_secret: 'wrong' });
  t.is(bad.statusCode, 401);
  t.is(bad.json<{ error: string }>().error, 'invalid_client');
  const basic = await revoke(
    app,
    { token: 'x' },
    { authorization: `Basic ${Buffer.from('nope:nope').toString('base64')}` },
  );
  t.is(basic.statusCode, 401);
  t.truthy(basic.headers['www-authenticate']);
});
