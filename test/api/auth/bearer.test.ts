import test from 'ava';
import { DRIVER, errorBody, loggedIn, me, testApp } from '../../helpers/api-app.js';

test('GET /api/car_driver/me returns the driver for a valid token', async (t) => {
  const app = await testApp(t);
  const tokens = await loggedIn(app);
  const response = await me(app, `Bearer ${tokens.access_token}`);
  t.is(response.statusCode, 200);
  t.deepEqual(response.json(), {
    id: 1,
    email: DRIVER.email,
    first_name: DRIVER.first_name,
    last_name: DRIVER.last_name,
    phone: DRIVER.phone,
  });
  t.is((await me(app, `bearer ${tokens.access_token}`)).statusCode, 200, 'the scheme is case-insensitive');
});

test('401 without a token: WWW-Authenticate Bearer without an error', async (t) => {
  const app = await testApp(t);
  for (const header of [undefined, '']) {
    const response = await me(app, header);
    t.is(response.statusCode, 401);
    t.is(errorBody(t, response).error, 'unauthorized');
    t.is(response.headers['www-authenticate'], 'Bearer realm="parkbench"');
  }
});

test('401 invalid_token for malformed and unknown tokens', async (t) => {
  const app = await testApp(t);
  for (const header of [
    'Bearer',
    'Bearer a b',
    'Basic abc',
    'Bearer ***',
    `Bearer ${'a'.repeat(600)}`,
    'Bearer unknown-token',
    'Token abc',
  ]) {
    const response = await me(app, header);
    t.is(response.statusCode, 401, header);
    t.is(errorBody(t, response).error, 'invalid_token');
    t.regex(response.headers['www-authenticate'] as string, /^Bearer realm="parkbench", error="invalid_token"/);
  }
});

test('401 once the access token expires (stepped clock), not before', async (t) => {
  const app = await testApp(t, { tokenTtlSeconds: 7200 });
  const tokens = await loggedIn(app);
  app.clock.advance(7_199_000);
  t.is((await me(app, `Bearer ${tokens.access_token}`)).statusCode, 200);
  app.clock.advance(1000);
  const expired = await me(app, `Bearer ${tokens.access_token}`);
  t.is(expired.statusCode, 401);
  t.regex(expired.headers['www-authenticate'] as string, /expired/);
});

test('401 for a revoked token', async (t) => {
  const app = await testApp(t);
  const tokens = await loggedIn(app);
  await app.app.inject({
    method: 'POST',
    url: '/api/oauth/revoke',
    payload: { token: tokens.access_token, ...app.client },
  });
  const response = await me(app, `Bearer ${tokens.access_token}`);
  t.is(response.statusCode, 401);
  t.regex(response.headers['www-authenticate'] as string, /revoked/);
});

test('a refresh token is not an access token', async (t) => {
  const app = await testApp(t);
  const tokens = await loggedIn(app);
  t.is((await me(app, `Bearer ${tokens.refresh_token}`)).statusCode, 401);
});
