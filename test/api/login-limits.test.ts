import test from 'ava';
import { DRIVER, passwordGrant, register, testApp } from '../helpers/api-app.js';

test('failed logins per username: 429 with Retry-After, until the window slides', async (t) => {
  const app = await testApp(t, { loginMaxFailuresPerUsername: 3, loginMaxFailuresPerAddress: 100, loginFailureWindowSeconds: 60 });
  await register(app);
  for (let i = 0; i < 3; i += 1) {
    t.is((await passwordGrant(app, DRIVER.email, 'wrong', `10.0.0.${i}`)).statusCode, 400);
    app.clock.advance(1000);
  }
  // Even the right password is refused while limited: guessing stops.
  const limited = await passwordGrant(app, DRIVER.email, DRIVER.password, '10.0.0.9');
  t.is(limited.statusCode, 429);
  t.is(limited.json<{ error: string }>().error, 'too_many_failed_logins');
  t.is(limited.headers['retry-after'], '57');
  t.is(limited.headers['cache-control'], 'no-store');
  app.clock.advance(57_000);
  t.is((await passwordGrant(app, DRIVER.email, DRIVER.password, '10.0.0.9')).statusCode, 200);
});

test('failed logins per address, across usernames', async (t) => {
  const app = await testApp(t, { loginMaxFailuresPerUsername: 100, loginMaxFailuresPerAddress: 4, loginFailureWindowSeconds: 900 });
  await register(app);
  for (let i = 0; i < 4; i += 1) t.is((await passwordGrant(app, `user${i}@example.com`, 'x', '192.0.2.1')).statusCode, 400);
  const limited = await passwordGrant(app, DRIVER.email, DRIVER.password, '192.0.2.1');
  t.is(limited.statusCode, 429);
  t.is(limited.headers['retry-after'], '900');
  t.is((await passwordGrant(app, DRIVER.email, DRIVER.password, '192.0.2.2')).statusCode, 200, 'other addresses are not affected');
});

test('a success clears the username count but not the address count', async (t) => {
  const app = await testApp(t, { loginMaxFailuresPerUsername: 2, loginMaxFailuresPerAddress: 3, loginFailureWindowSeconds: 900 });
  await register(app);
  t.is((await passwordGrant(app, DRIVER.email, 'x', '192.0.2.1')).statusCode, 400);
  t.is((await passwordGrant(app, DRIVER.email, DRIVER.password, '192.0.2.1')).statusCode, 200);
  t.is((await passwordGrant(app, DRIVER.email, 'x', '192.0.2.1')).statusCode, 400);
  t.is((await passwordGrant(app, DRIVER.email, 'x', '192.0.2.1')).statusCode, 400);
  t.is((await passwordGrant(app, DRIVER.email, DRIVER.password, '192.0.2.1')).statusCode, 429);
});

test('only failures count: many successes are never limited', async (t) => {
  const app = await testApp(t, { loginMaxFailuresPerUsername: 1, loginMaxFailuresPerAddress: 1 });
  await register(app);
  for (let i = 0; i < 5; i += 1) t.is((await passwordGrant(app)).statusCode, 200);
});
