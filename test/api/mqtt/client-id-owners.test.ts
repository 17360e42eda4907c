// Who holds an MQTT client id: the account of its live
// connections, then of the persistent session it left behind.
import test from 'ava';
import { ClientIdOwners } from '../../../api/mqtt/client-id-owners.js';

test('an id is held while its connections are open, and refused to other accounts', (t) => {
  const owners = new ClientIdOwners();
  t.true(owners.claim('id', 'op-a', true));
  t.true(owners.claim('id', 'op-a', true), 'the same account again (a takeover of its own)');
  t.false(owners.claim('id', 'box-9101', true));
  owners.left('id', 'op-a');
  t.false(owners.claim('id', 'box-9101', true), 'one connection still open');
  owners.left('id', 'op-a');
  t.is(owners.size, 0);
  t.true(owners.claim('id', 'box-9101', true), 'free once all have left');
});

test('a persistent session keeps the id until its account comes back clean', (t) => {
  const owners = new ClientIdOwners();
  t.true(owners.claim('monitor-2', 'op-a', false));
  owners.left('monitor-2', 'op-a');
  t.false(owners.claim('monitor-2', 'box-9101', false), "the stored session is op-a's");
  t.true(owners.claim('monitor-2', 'op-a', true));
  owners.sessionCleared('monitor-2', 'op-a');
  owners.left('monitor-2', 'op-a');
  t.true(owners.claim('monitor-2', 'box-9101', false), 'the session is gone with the clean connection');
});

test("another account's calls do not change a holding", (t) => {
  const owners = new ClientIdOwners();
  t.true(owners.claim('id', 'op-a', false));
  owners.sessionCleared('id', 'box-9101');
  owners.left('id', 'box-9101');
  owners.left('id', 'op-a');
  t.false(owners.claim('id', 'box-9101', true));
});
