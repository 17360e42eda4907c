// The bearer cache: revocation in this process is immediate, the token's own
// expiry and the cache's TTL hold on the injected clock, and
// TOKEN_CACHE_SECONDS=0 reads the database every time.
import test from 'ava';
import { BearerCache } from '../../../api/auth/bearer-cache.js';
import { FakeClock } from '../../../lib/fake-clock.js';
import { loggedIn, me, tempDir, testApp } from '../../helpers/api-app.js';

/** Counts bearer reads by wrapping the repository's lookup. */
function countReads(app: Awaited<ReturnType<typeof testApp>>): { reads: number } {
  const counter = { reads: 0 };
  const tokens = ctxTokens(app);
  const original = tokens.findBearer.bind(tokens);
  tokens.findBearer = (hash: Buffer) => {
    counter.reads += 1;
    return original(hash);
  };
  return counter;
}

function ctxTokens(app: Awaited<ReturnType<typeof testApp>>) {
  return app.ctx.tokens;
}

test('a cached token revoked in this process gives 401 on the next request', async (t) => {
  const app = await testApp(t);
  const tokens = await loggedIn(app);
  const bearer = `Bearer ${tokens.access_token}`;
  const counter = countReads(app);
  t.is((await me(app, bearer)).statusCode, 200);
  t.is((await me(app, bearer)).statusCode, 200);
  t.is(counter.reads, 1, 'the second request was served from the cache');
  await app.app.inject({
    method: 'POST',
    url: '/api/oauth/revoke',
    payload: { token: tokens.refresh_token, ...app.client },
  });
  const revoked = await me(app, bearer);
  t.is(revoked.statusCode, 401);
  t.regex(revoked.headers['www-authenticate'] as string, /revoked/);
});

test('refresh rotation ends the cached access token at once', async (t) => {
  const app = await testApp(t);
  const tokens = await loggedIn(app);
  t.is((await me(app, `Bearer ${tokens.access_token}`)).statusCode, 200);
  const refreshed = await app.app.inject({
    method: 'POST',
    url: '/api/oauth/token',
    payload: { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, ...app.client },
  });
  t.is(refreshed.statusCode, 200);
  t.is((await me(app, `Bearer ${tokens.access_token}`)).statusCode, 401);
  t.is((await me(app, `Bearer ${refreshed.json<{ access_token: string }>().access_token}`)).statusCode, 200);
});

test('the token expiry holds on the injected clock, cache or not', async (t) => {
  const app = await testApp(t, { tokenTtlSeconds: 10, tokenCacheSeconds: 60 });
  const tokens = await loggedIn(app);
  const bearer = `Bearer ${tokens.access_token}`;
  t.is((await me(app, bearer)).statusCode, 200);
  app.clock.advance(9_999);
  t.is((await me(app, bearer)).statusCode, 200);
  app.clock.advance(1);
  const expired = await me(app, bearer);
  t.is(expired.statusCode, 401);
  t.regex(expired.headers['www-authenticate'] as string, /expired/);
});

test('entries live TOKEN_CACHE_SECONDS: a revocation by another process is seen after it', async (t) => {
  const app = await testApp(t, { tokenCacheSeconds: 5 });
  const tokens = await loggedIn(app);
  const bearer = `Bearer ${tokens.access_token}`;
  t.is((await me(app, bearer)).statusCode, 200);
  // Another process revokes: a write to the shared file, unseen by this cache.
  await app.ctx.store.kysely.updateTable('tokens').set({ revoked_at: 1 }).execute();
  t.is((await me(app, bearer)).statusCode, 200, 'still cached');
  app.clock.advance(5_000);
  t.is((await me(app, bearer)).statusCode, 401, 'read again once the entry aged out');
});

test('two API processes on one database: a token revoked through one is refused by the other within TOKEN_CACHE_SECONDS', async (t) => {
  // Two apps, each its own bearer cache and clock, on ONE SQLite file.
  const dir = tempDir(t);
  const first = await testApp(t, { tokenCacheSeconds: 5 }, { dir });
  const second = await testApp(t, { tokenCacheSeconds: 5 }, { dir });
  const tokens = await loggedIn(first);
  const bearer = `Bearer ${tokens.access_token}`;
  t.is((await me(second, bearer)).statusCode, 200, 'the other process reads the pair from the shared file');
  const revoked = await first.app.inject({
    method: 'POST',
    url: '/api/oauth/revoke',
    payload: { token: tokens.access_token, ...first.client },
  });
  t.is(revoked.statusCode, 200);
  t.is((await me(first, bearer)).statusCode, 401, 'refused at once where it was revoked');
  t.is((await me(second, bearer)).statusCode, 200, 'still cached in the other process');
  second.clock.advance(4_999);
  t.is((await me(second, bearer)).statusCode, 200, 'within TOKEN_CACHE_SECONDS');
  second.clock.advance(1);
  const refused = await me(second, bearer);
  t.is(refused.statusCode, 401, 'read again once the entry is TOKEN_CACHE_SECONDS old');
  t.regex(refused.headers['www-authenticate'] as string, /revoked/);
});

test('TOKEN_CACHE_SECONDS=0 reads the database on every request', async (t) => {
  const app = await testApp(t, { tokenCacheSeconds: 0 });
  const tokens = await loggedIn(app);
  const counter = countReads(app);
  for (let i = 0; i < 3; i += 1) t.is((await me(app, `Bearer ${tokens.access_token}`)).statusCode, 200);
  t.is(counter.reads, 3);
  t.is(app.ctx.bearerCache.size, 0);
});

test('the cache is bounded: the oldest entry goes first', (t) => {
  const clock = new FakeClock();
  const cache = new BearerCache(5_000, clock, 3);
  const user = { id: 1, email: 'a@b.co', first_name: 'A', last_name: 'B', phone: '1' };
  for (let i = 0; i < 4; i += 1) cache.set(`hash ${i}`, i, user, clock.now() + 60_000);
  t.is(cache.size, 3);
  t.is(cache.get('hash 0'), undefined);
  t.deepEqual(cache.get('hash 3'), user);
  cache.evictPair(3);
  t.is(cache.get('hash 3'), undefined);
});
