// Through a real socket: listen on port 0, real HTTP requests.
import { Agent, get as httpGet } from 'node:http';
import test from 'ava';
import { DRIVER, loggedIn, register, testApp } from '../../helpers/api-app.js';

test('register, log in and call a protected route over real HTTP', async (t) => {
  const app = await testApp(t);
  await register(app);
  const address = await app.app.listen({ host: '127.0.0.1', port: 0 });
  const form = new URLSearchParams({ grant_type: 'password', username: DRIVER.email, password: DRIVER.password });
  const basic = Buffer.from(`${app.client.client_app_id}:${app.client.client_secret}`).toString('base64');
  const tokenResponse = await fetch(`${address}/api/oauth/token`, {
    method: 'POST',
    body: form,
    headers: { authorization: `Basic ${basic}` },
  });
  t.is(tokenResponse.status, 200);
  t.is(tokenResponse.headers.get('cache-control'), 'no-store');
  const { access_token: accessToken } = (await tokenResponse.json()) as { access_token: string };
  const me = await fetch(`${address}/api/car_driver/me`, { headers: { authorization: `Bearer ${accessToken}` } });
  t.is(me.status, 200);
  t.is(((await me.json()) as { email: string }).email, DRIVER.email);
  const big = await fetch(`${address}/api/car_driver`, {
    method: 'POST',
    body: JSON.stringify({ pad: 'x'.repeat(2 * 1024 * 1024) }),
    headers: { 'content-type': 'application/json' },
  });
  t.is(big.status, 413);
});

/** GET /api/car_driver/me on one kept-alive connection; the status and which socket carried it. */
function meOn(
  agent: Agent,
  address: string,
  authorization: string,
): Promise<{ status: number; port: number | undefined }> {
  return new Promise((resolve, reject) => {
    const request = httpGet(`${address}/api/car_driver/me`, { agent, headers: { authorization } }, (response) => {
      response.resume();
      response.on('end', () => resolve({ status: response.statusCode ?? 0, port: request.socket?.localPort }));
    });
    request.on('error', reject);
  });
}

test('one kept-alive connection: a revoked token is refused at once, and a changed header is checked anew', async (t) => {
  const app = await testApp(t);
  const tokens = await loggedIn(app);
  const address = await app.app.listen({ host: '127.0.0.1', port: 0 });
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => agent.destroy());
  const bearer = `Bearer ${tokens.access_token}`;
  const first = await meOn(agent, address, bearer);
  t.is(first.status, 200);
  t.is((await meOn(agent, address, 'Bearer not/a/token!')).status, 401);
  t.is((await meOn(agent, address, bearer)).status, 200);
  await app.app.inject({
    method: 'POST',
    url: '/api/oauth/revoke',
    payload: { token: tokens.access_token, ...app.client },
  });
  const afterRevoke = await meOn(agent, address, bearer);
  t.is(afterRevoke.status, 401, 'the same header on the same connection still meets revocation');
  t.is(afterRevoke.port, first.port, 'all on one connection');
});
