// node --experimental-vm-modules node_modules/jest/bin/jest.js jest.test.js (jest's ESM mode)
import { afterAll, beforeAll, expect, test } from '@jest/globals';
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
