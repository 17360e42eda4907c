// npx ava ava.test.js
import test from 'ava';
import { startBench } from 'parkbench/testing';
import { entranceOf, registerDriver, sendToBox, startSession } from './phone.js';

let bench;
test.before(async () => {
  bench = await startBench();
});
test.after.always(() => bench?.stop());

test('the entrance box opens for a new driver, and the session is active', async (t) => {
  const token = await registerDriver(bench);
  const session = await startSession(bench, token);
  t.is(session.parking_session.state, 'entering');
  const answer = await sendToBox(bench, entranceOf(bench), session.smart_key.access_command);
  t.not(answer.response, null);
  const active = await bench.waitForSession(session.parking_session.id, 'active');
  t.is(active.state, 'active');
});
