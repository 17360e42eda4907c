// Operators, their event-stream tickets and the MQTT accounts on both
// stores, with the races that must hold across processes on
// PostgreSQL: a ticket taken twice at once (one wins), one operator name
// added twice at once (one row), the bench's operator ensured twice at once.
import test from 'ava';
import { tokenHash } from '../../../api/auth/secrets.js';
import { EventTicketRepository, TICKET_TTL_MS } from '../../../api/operators/stream/tickets.js';
import { MqttAccountRepository } from '../../../api/mqtt/accounts.js';
import { addMqttClient, ensureOperatorClient, mosquittoExport } from '../../../api/mqtt/clients.js';
import { hashMqttPassword } from '../../../api/auth/mqtt-password.js';
import { addOperator, ensureOperator, listOperators, removeOperator } from '../../../api/operators/accounts.js';
import { OperatorRepository } from '../../../api/operators/repository.js';
import { DomainError } from '../../../api/http/domain-error.js';
import { Topics } from '../../../lib/mqtt-topics.js';
import { insertParking } from '../../helpers/store-rows.js';
import { storeTests } from '../../helpers/stores.js';

const storeTest = storeTests(test);
const NOW = 1_700_000_000_000;

storeTest('operators: added, found by token hash and name, listed by name, removed', async (t, store) => {
  const operators = new OperatorRepository(store);
  const bench = await addOperator(store, 'bench', NOW);
  await addOperator(store, 'alice', NOW + 1);
  const row = await operators.findByTokenHash(tokenHash(bench.token));
  t.like(row, { name: 'bench', created_at: NOW });
  t.deepEqual(row?.token_hash, tokenHash(bench.token));
  t.deepEqual(await operators.findByName('bench'), row);
  t.is(await operators.findByTokenHash(tokenHash('nobody')), undefined);
  t.deepEqual(await listOperators(store), [
    { name: 'alice', created_at: new Date(NOW + 1).toISOString() },
    { name: 'bench', created_at: new Date(NOW).toISOString() },
  ]);
  const taken = await t.throwsAsync(addOperator(store, 'bench', NOW), { instanceOf: DomainError });
  t.like(taken, { kind: 'conflict' });
  t.deepEqual(await removeOperator(store, 'bench'), { name: 'bench', removed: true });
  t.is(await operators.findByTokenHash(tokenHash(bench.token)), undefined);
  t.like(await t.throwsAsync(removeOperator(store, 'bench'), { instanceOf: DomainError }), { kind: 'not_found' });
});

storeTest('one operator name added twice at once: one row, the other a conflict', async (t, store) => {
  const results = await Promise.allSettled([addOperator(store, 'bench', NOW), addOperator(store, 'bench', NOW)]);
  t.is(results.filter((result) => result.status === 'fulfilled').length, 1);
  t.like(results.find((result) => result.status === 'rejected')?.reason, { kind: 'conflict' });
  t.is((await listOperators(store)).length, 1);
});

storeTest(
  'ensureOperator creates, then replaces the token; twice at once, one row and one live token',
  async (t, store) => {
    const operators = new OperatorRepository(store);
    const first = await ensureOperator(store, 'bench', NOW);
    const second = await ensureOperator(store, 'bench', NOW + 1);
    t.is(await operators.findByTokenHash(tokenHash(first.token)), undefined, 'the previous token is refused');
    t.like(await operators.findByTokenHash(tokenHash(second.token)), { name: 'bench', created_at: NOW });
    const both = await Promise.all([ensureOperator(store, 'page', NOW), ensureOperator(store, 'page', NOW)]);
    const live = await Promise.all(both.map(({ token }) => operators.findByTokenHash(tokenHash(token))));
    t.is(live.filter((row) => row !== undefined).length, 1);
    t.is((await listOperators(store)).length, 2);
  },
);

storeTest('tickets: taken once, within their time, by their operator; old ones pruned', async (t, store) => {
  const operator = await addOperator(store, 'bench', NOW);
  const operatorId = (await new OperatorRepository(store).findByName('bench'))?.id ?? 0;
  t.truthy(operator.token);
  const tickets = new EventTicketRepository(store);
  const issued = await tickets.issue(operatorId, NOW);
  t.is(issued.expiresAt, NOW + TICKET_TTL_MS);
  t.regex(issued.ticket, /^[A-Za-z0-9_-]{43}$/);
  t.deepEqual(await tickets.take(issued.ticket, NOW + 1), {
    id: operatorId,
    name: 'bench',
    tokenHash: tokenHash(operator.token),
  });
  t.is(await tickets.take(issued.ticket, NOW + 2), undefined, 'used');
  const late = await tickets.issue(operatorId, NOW);
  t.is(await tickets.take(late.ticket, NOW + TICKET_TTL_MS), undefined, 'expired');
  t.is(await tickets.take('x'.repeat(43), NOW), undefined, 'unknown');
  // An hour after they expired, the next issue deletes them.
  await tickets.issue(operatorId, NOW + TICKET_TTL_MS + 3_600_001);
  const left = await store.kysely.selectFrom('event_tickets').select('id').execute();
  t.is(left.length, 1);
});

storeTest("a replaced token voids the operator's tickets not taken yet; another operator's stay", async (t, store) => {
  await addOperator(store, 'bench', NOW);
  await addOperator(store, 'other', NOW);
  const operators = new OperatorRepository(store);
  const idOf = async (name: string) => (await operators.findByName(name))?.id ?? 0;
  const tickets = new EventTicketRepository(store);
  const asked = await tickets.issue(await idOf('bench'), NOW);
  const others = await tickets.issue(await idOf('other'), NOW);
  const replaced = await ensureOperator(store, 'bench', NOW);
  t.is(await tickets.take(asked.ticket, NOW + 1), undefined, 'asked for with the previous token');
  t.like(await tickets.take(others.ticket, NOW + 1), { name: 'other' });
  const fresh = await tickets.issue(await idOf('bench'), NOW);
  t.deepEqual((await tickets.take(fresh.ticket, NOW + 1))?.tokenHash, tokenHash(replaced.token));
});

storeTest('a ticket taken twice at once: one wins', async (t, store) => {
  await addOperator(store, 'bench', NOW);
  const operatorId = (await new OperatorRepository(store).findByName('bench'))?.id ?? 0;
  const tickets = new EventTicketRepository(store);
  for (let round = 0; round < 5; round += 1) {
    const { ticket } = await tickets.issue(operatorId, NOW);
    const taken = await Promise.all([tickets.take(ticket, NOW + 1), tickets.take(ticket, NOW + 1)]);
    t.is(taken.filter((operator) => operator !== undefined).length, 1, `round ${round}`);
  }
});

storeTest(
  'MQTT accounts: clients added and found, passwords replaced, boxes and clients authenticated',
  async (t, store) => {
    const accounts = new MqttAccountRepository(store);
    const gateway = await addMqttClient(store, 'Bench 1', 'gateway', NOW);
    t.like(gateway, { mqtt_username: 'gw-bench-1', role: 'gateway' });
    t.like(await accounts.findClient('gw-bench-1'), { name: 'Bench 1', role: 'gateway' });
    t.like(await t.throwsAsync(addMqttClient(store, 'bench 1', 'gateway', NOW), { instanceOf: DomainError }), {
      kind: 'conflict',
    });
    t.deepEqual(await accounts.authenticate('gw-bench-1', gateway.mqtt_password), {
      role: 'gateway',
      username: 'gw-bench-1',
    });
    t.is(await accounts.authenticate('gw-bench-1', 'wrong'), null);
    t.is(await accounts.authenticate('nobody', 'x'), null);
    const first = await ensureOperatorClient(store, 'Watch', 'op-watch', NOW);
    const again = await ensureOperatorClient(store, 'Watch', 'op-watch', NOW);
    t.is(await accounts.authenticate('op-watch', first.password), null, 'the previous password is refused');
    t.deepEqual(await accounts.authenticate('op-watch', again.password), { role: 'operator', username: 'op-watch' });
    // A box's account (as admin box add stores it).
    const parkingId = await insertParking(store, { price_per_hour_minor: 0, created_at: NOW });
    await store.kysely
      .insertInto('boxes')
      .values({
        module_id: 9101,
        parking_id: parkingId,
        direction: 'entrance',
        mac_address: '02:50:42:00:23:8D',
        box_key: '00'.repeat(16),
        mqtt_username: 'box-9101',
        mqtt_password_hash: hashMqttPassword('box-password'),
        created_at: NOW,
        last_seen_at: null,
        last_box_seq: null,
        last_box_time: null,
        box_time_drift_seconds: null,
        battery_mv: null,
        last_control_seq: null,
      })
      .execute();
    t.deepEqual(await accounts.authenticate('box-9101', 'box-password'), {
      role: 'box',
      username: 'box-9101',
      moduleId: 9101,
    });
    t.is(await accounts.authenticate('box-9101', 'wrong'), null);
    const exported = await mosquittoExport(store, new Topics('parkbench'), undefined);
    t.regex(exported.passwords, /^gw-bench-1:\$7\$/m);
    t.regex(exported.passwords, /^op-watch:\$7\$/m);
    t.regex(exported.passwords, /^box-9101:\$7\$/m);
    t.deepEqual(
      (await accounts.listWithHashes()).map((entry) => entry.account.username),
      ['box-9101', 'gw-bench-1', 'op-watch'],
      'boxes first, then clients by username',
    );
  },
);
