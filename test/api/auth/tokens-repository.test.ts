// Client apps, users and token pairs on both stores: what the
// OAuth endpoints and the bearer lookup rely on, and the races that must
// hold across processes on PostgreSQL: two rotations of one pair at once
// (one wins, nothing is stored for the other), the same email registered
// twice at once (one row).
import test from 'ava';
import { tokenHash } from '../../../api/auth/secrets.js';
import type { Store } from '../../../api/db/store.js';
import { ClientAppRepository } from '../../../api/auth/client-apps-repository.js';
import { TokenRepository, type NewTokenPair } from '../../../api/auth/tokens-repository.js';
import { UserRepository } from '../../../api/auth/users-repository.js';
import { storeTests } from '../../helpers/stores.js';

const storeTest = storeTests(test);
const NOW = 1_700_000_000_000;

const ADA = { email: ' Ada@Example.com ', passwordHash: 'scrypt$', firstName: 'Ada', lastName: 'Lovelace', phone: '1' };

interface Seeded {
  userId: number;
  clientId: number;
}

async function seed(store: Store): Promise<Seeded> {
  const clientId = await new ClientAppRepository(store).insert('app', 'app-id', 'secret-hash', NOW);
  const user = await new UserRepository(store).insert(ADA, NOW);
  if (user === undefined) throw new Error('seed user not inserted');
  return { userId: user.id, clientId };
}

let serial = 0;
function pair({ userId, clientId }: Seeded): NewTokenPair {
  serial += 1;
  const access = `access-${serial}`;
  const refresh = `refresh-${serial}`;
  return {
    userId,
    clientAppRowId: clientId,
    accessHash: tokenHash(access),
    refreshHash: tokenHash(refresh),
    accessExpiresAt: NOW + 3_600_000,
    refreshExpiresAt: NOW + 86_400_000,
  };
}

storeTest('client apps: inserted with their id, found by public id and by row id', async (t, store) => {
  const apps = new ClientAppRepository(store);
  const id = await apps.insert('bench', 'public-id', 'hash', NOW);
  const row = { id, name: 'bench', client_app_id: 'public-id', client_secret_hash: 'hash' };
  t.deepEqual(await apps.findByClientAppId('public-id'), row);
  t.deepEqual(await apps.findById(id), row);
  t.is(await apps.findByClientAppId('nobody'), undefined);
  t.is(await apps.findById(id + 1), undefined);
});

storeTest('users: the email stored lowercased and trimmed, found case-insensitively', async (t, store) => {
  const users = new UserRepository(store);
  const row = await users.insert(ADA, NOW);
  t.like(row, { email: 'ada@example.com', first_name: 'Ada', password_hash: 'scrypt$' });
  t.deepEqual(await users.findByEmail('ADA@example.COM'), row);
  t.deepEqual(await users.find(row?.id ?? 0), row);
  t.is(await users.findByEmail('bob@example.com'), undefined);
  t.is(await users.insert({ ...ADA, email: 'ada@EXAMPLE.com' }, NOW), undefined, 'the email is taken');
});

storeTest('the same email registered twice at once: one row, the other told it is taken', async (t, store) => {
  // Two stores' worth of concurrency on PostgreSQL: the pool runs both inserts on two connections.
  const users = new UserRepository(store);
  const results = await Promise.all([users.insert(ADA, NOW), users.insert(ADA, NOW), users.insert(ADA, NOW)]);
  t.is(results.filter((row) => row !== undefined).length, 1);
  const count = await store.kysely
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  t.is(Number(count.n), 1); // count(*) is a bigint on PostgreSQL
});

storeTest(
  'a login pair is the first of its own family; found by either hash and by the bearer lookup',
  async (t, store) => {
    const seeded = await seed(store);
    const tokens = new TokenRepository(store);
    const first = pair(seeded);
    const id = await tokens.insert(first, NOW);
    const row = {
      id,
      user_id: seeded.userId,
      client_app_id: seeded.clientId,
      access_expires_at: first.accessExpiresAt,
      refresh_expires_at: first.refreshExpiresAt,
      revoked_at: null,
      family_id: id,
    };
    t.deepEqual(await tokens.findByAccessHash(first.accessHash), row);
    t.deepEqual(await tokens.findByRefreshHash(first.refreshHash), row);
    t.is(await tokens.findByAccessHash(first.refreshHash), undefined);
    t.deepEqual(await tokens.findBearer(first.accessHash), {
      id: seeded.userId,
      email: 'ada@example.com',
      first_name: 'Ada',
      last_name: 'Lovelace',
      phone: '1',
      pair_id: id,
      access_expires_at: first.accessExpiresAt,
      revoked_at: null,
    });
    t.is(await tokens.findBearer(tokenHash('unknown')), undefined);
    const another = pair(seeded);
    const second = await tokens.insert(another, NOW);
    t.like(await tokens.findByAccessHash(another.accessHash), { id: second, family_id: second });
  },
);

storeTest('revoke ends a pair once; every pair it ends is reported, already revoked ones too', async (t, store) => {
  const seeded = await seed(store);
  const tokens = new TokenRepository(store);
  const ended: number[] = [];
  tokens.onPairEnded((id) => ended.push(id));
  const login = pair(seeded);
  const id = await tokens.insert(login, NOW);
  t.true(await tokens.revoke(id, NOW + 1));
  t.false(await tokens.revoke(id, NOW + 2));
  t.deepEqual(ended, [id, id]);
  t.like(await tokens.findBearer(login.accessHash), { revoked_at: NOW + 1 });
});

storeTest('rotation keeps the family; revokeFamily ends the live pair and reports them all', async (t, store) => {
  const seeded = await seed(store);
  const tokens = new TokenRepository(store);
  const ended: number[] = [];
  tokens.onPairEnded((id) => ended.push(id));
  const login = pair(seeded);
  const first = await tokens.insert(login, NOW);
  const next = pair(seeded);
  t.true(await tokens.rotate({ id: first, family_id: first }, next, NOW + 1));
  const rotated = await tokens.findByRefreshHash(next.refreshHash);
  t.like(rotated, { family_id: first, revoked_at: null });
  t.like(await tokens.findByAccessHash(login.accessHash), { revoked_at: NOW + 1 });
  t.deepEqual(ended, [first]);
  const late = pair(seeded);
  t.false(await tokens.rotate({ id: first, family_id: first }, late, NOW + 2), 'a used pair rotates no more');
  t.is(await tokens.findByAccessHash(late.accessHash), undefined, 'nothing stored for it');
  ended.length = 0;
  t.is(await tokens.revokeFamily(first, NOW + 3), 1);
  t.deepEqual(ended.sort(), [first, rotated?.id ?? 0].sort());
  t.like(await tokens.findByRefreshHash(next.refreshHash), { revoked_at: NOW + 3 });
});

storeTest('two rotations of one pair at once: one wins, the other gets false and stores nothing', async (t, store) => {
  const seeded = await seed(store);
  const tokens = new TokenRepository(store);
  for (let round = 0; round < 5; round += 1) {
    const first = await tokens.insert(pair(seeded), NOW);
    const candidates = [pair(seeded), pair(seeded), pair(seeded)];
    const results = await Promise.all(
      candidates.map((candidate) => tokens.rotate({ id: first, family_id: first }, candidate, NOW + 1)),
    );
    t.is(results.filter(Boolean).length, 1, `round ${round}: one winner`);
    const stored = await Promise.all(candidates.map((candidate) => tokens.findByAccessHash(candidate.accessHash)));
    t.deepEqual(
      stored.map((row) => row !== undefined),
      results,
      `round ${round}: only the winner's pair is stored`,
    );
  }
});
