import test from 'ava';
import { configWith } from '../../../api/config/index.js';
import { DRIVER, passwordGrant, register, testApp } from '../../helpers/api-app.js';

test('failed logins per username: 429 with Retry-After, until the window slides', async (t) => {
  const app = await testApp(t, {
    loginMaxFailuresPerUsername: 3,
    loginMaxFailuresPerAddress: 100,
    loginFailureWindowSeconds: 60,
  });
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
  const app = await testApp(t, {
    loginMaxFailuresPerUsername: 100,
    loginMaxFailuresPerAddress: 4,
    loginFailureWindowSeconds: 900,
  });
  await register(app);
  for (let i = 0; i < 4; i += 1)
    t.is((await passwordGrant(app, `user${i}@example.com`, 'x', '192.0.2.1')).statusCode, 400);
  const limited = await passwordGrant(app, DRIVER.email, DRIVER.password, '192.0.2.1');
  t.is(limited.statusCode, 429);
  t.is(limited.headers['retry-after'], '900');
  t.is(
    (await passwordGrant(app, DRIVER.email, DRIVER.password, '192.0.2.2')).statusCode,
    200,
    'other addresses are not affected',
  );
});

test('a success clears the username count but not the address count', async (t) => {
  const app = await testApp(t, {
    loginMaxFailuresPerUsername: 2,
    loginMaxFailuresPerAddress: 3,
    loginFailureWindowSeconds: 900,
  });
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

/** Statuses of a burst of concurrent password grants, and how many of them
 * hashed a password: a 429 answers before any hashing, a 400 or 200 after it. */
async function burst(
  app: Parameters<typeof passwordGrant>[0],
  grants: { username: string; password: string }[],
  address: string,
) {
  const statuses = (
    await Promise.all(grants.map(({ username, password }) => passwordGrant(app, username, password, address)))
  ).map((r) => r.statusCode);
  const count = (status: number) => statuses.filter((s) => s === status).length;
  return { hashed: count(400) + count(200), limited: count(429), succeeded: count(200), total: statuses.length };
}

test('a concurrent burst for one account hashes at most the username limit, in-flight guesses counting', async (t) => {
  const app = await testApp(t, {
    loginMaxFailuresPerUsername: 5,
    loginMaxFailuresPerAddress: 1000,
    loginFailureWindowSeconds: 900,
  });
  await register(app);
  // secret-0 ... secret-299 with the right password among them, all at once.
  const grants = Array.from({ length: 300 }, (_, i) => ({
    username: DRIVER.email,
    password: i === 150 ? DRIVER.password : `secret-${i}`,
  }));
  const result = await burst(app, grants, '198.51.100.7');
  t.log(`guesses hashed in a burst of ${result.total}: ${result.hashed} (${result.limited} answered 429)`);
  t.true(result.hashed <= 5, `${result.hashed} guesses hashed`);
  t.is(result.hashed + result.limited, 300);
  // The window is full of failures: even the right password waits now.
  t.is(
    (await passwordGrant(app, DRIVER.email, DRIVER.password, '198.51.100.8')).statusCode,
    result.succeeded === 1 ? 200 : 429,
  );
});

test('a concurrent burst from one address across usernames hashes at most the address limit', async (t) => {
  const app = await testApp(t, {
    loginMaxFailuresPerUsername: 1000,
    loginMaxFailuresPerAddress: 20,
    loginFailureWindowSeconds: 900,
  });
  await register(app);
  const grants = Array.from({ length: 300 }, (_, i) => ({
    username: i === 150 ? DRIVER.email : `user${i}@example.com`,
    password: i === 150 ? DRIVER.password : `secret-${i}`,
  }));
  const result = await burst(app, grants, '192.0.2.50');
  t.log(
    `guesses hashed in a burst of ${result.total} across usernames: ${result.hashed} (${result.limited} answered 429)`,
  );
  t.true(result.hashed <= 20, `${result.hashed} guesses hashed`);
  t.is(result.hashed + result.limited, 300);
  t.is(
    (await passwordGrant(app, DRIVER.email, DRIVER.password, '192.0.2.51')).statusCode,
    200,
    'other addresses are not affected',
  );
});

test('concurrent successes of one account are never counted as failures once they end', async (t) => {
  const app = await testApp(t, { loginMaxFailuresPerUsername: 3, loginMaxFailuresPerAddress: 3 });
  await register(app);
  // In flight they hold slots (a burst of 10 right passwords may see 429s), but
  // each success gives its slot back: afterwards the account logs in as usual.
  const first = await burst(
    app,
    Array.from({ length: 10 }, () => ({ username: DRIVER.email, password: DRIVER.password })),
    '203.0.113.1',
  );
  // How many overlap depends on the store's latency (on PostgreSQL more of
  // them end before the last begin); at least one gets through either way.
  t.true(first.succeeded >= 1, JSON.stringify(first));
  t.is(first.succeeded + first.limited, 10, JSON.stringify(first));
  for (let i = 0; i < 5; i += 1)
    t.is((await passwordGrant(app, DRIVER.email, DRIVER.password, '203.0.113.1')).statusCode, 200);
});

test('over real sockets with the default limits and scrypt cost: a burst of 300 guesses for one account hashes at most 5', async (t) => {
  // The production cost (tens of ms a hash) keeps guesses in flight while the
  // burst arrives, as in an attack; the limiter lets only 5 be hashed.
  const app = await testApp(t, { scryptLog2N: configWith({}).scryptLog2N });
  await register(app);
  const address = await app.app.listen({ host: '127.0.0.1', port: 0 });
  const statuses = await Promise.all(
    Array.from({ length: 300 }, async (_, i) => {
      const body = {
        grant_type: 'password',
        username: DRIVER.email,
        password: i === 150 ? DRIVER.password : `secret-${i}`,
        ...app.client,
      };
      const response = await fetch(`${address}/api/oauth/token`, {
        method: 'POST',
        body: JSON.stringify(body),
        headers: { 'content-type': 'application/json' },
      });
      await response.arrayBuffer();
      return response.status;
    }),
  );
  const hashed = statuses.filter((status) => status === 400 || status === 200).length;
  t.log(`guesses hashed in a burst of 300 over real sockets: ${hashed}`);
  t.true(hashed <= app.config.loginMaxFailuresPerUsername, `${hashed} guesses hashed`);
  t.is(statuses.filter((status) => status === 429).length, 300 - hashed);
});
