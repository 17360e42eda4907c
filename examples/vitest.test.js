// npx vitest run vitest.test.js
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startBench } from 'parkbench/testing';
import { entranceOf, registerDriver, sendToBox, startSession } from './phone.js';

let bench;
beforeAll(async () => {
  bench = await startBench();
}, 30_000);
afterAll(() => bench?.stop());

test('the entrance box opens for a new driver, and the session is active', async () => {
  const token = await registerDriver(bench);
  const session = await startSession(bench, token);
  expect(session.parking_session.state).toBe('entering');
  const answer = await sendToBox(bench, entranceOf(bench), session.smart_key.access_command);
  expect(answer.response).not.toBeNull();
  const active = await bench.waitForSession(session.parking_session.id, 'active');
  expect(active.state).toBe('active');
}, 30_000);
