// One test through a real socket: listen on port 0, real HTTP requests.
import test from 'ava';
import { DRIVER, register, testApp } from '../helpers/api-app.js';

test('register, log in and call a protected route over real HTTP', async (t) => {
  const app = await testApp(t);
  await register(app);
  const address = await app.app.listen({ host: '127.0.0.1', port: 0 });
  const form = new URLSearchParams({ grant_type: 'password', username: DRIVER.email, password: DRIVER.password });
  const basic = Buffer.from(`${app.client.client_app_id}:${app.client.client_secret}`).toString('base64');
  const tokenResponse = await fetch(`${address}/api/oauth/token`, { method: 'POST', body: form, headers: { authorization: `Basic ${basic}` } });
  t.is(tokenResponse.status, 200);
  t.is(tokenResponse.headers.get('cache-control'), 'no-store');
  const { access_token: accessToken } = (await tokenResponse.json()) as { access_token: string };
  const me = await fetch(`${address}/api/car_driver/me`, { headers: { authorization: `Bearer ${accessToken}` } });
  t.is(me.status, 200);
  t.is(((await me.json()) as { email: string }).email, DRIVER.email);
  const big = await fetch(`${address}/api/car_driver`, { method: 'POST', body: JSON.stringify({ pad: 'x'.repeat(2 * 1024 * 1024) }), headers: { 'content-type': 'application/json' } });
  t.is(big.status, 413);
});
