// node --test node-test.test.js
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startBench } from 'parkbench/testing';
import { entranceOf, registerDriver, sendToBox, startSession } from './phone.js';

let bench;
before(async () => {
  bench = await startBench();
});
after(() => bench?.stop());

test('the entrance box opens for a new driver, and the session is active', async () => {
  const token = await registerDriver(bench);
  const session = await startSession(bench, token);
  assert.equal(session.parking_session.state, 'entering');
  const answer = await sendToBox(bench, entranceOf(bench), session.smart_key.access_command);
  assert.notEqual(answer.response, null);
  const active = await bench.waitForSession(session.parking_session.id, 'active');
  assert.equal(active.state, 'active');
});
