// Generated hostile box log bodies: never a 500, never a partial batch. A
// refused batch stores nothing; an accepted one stores exactly the logs it
// answers as not duplicate, alone or sharing a commit with concurrent ones.
import test from 'ava';
import fc from 'fast-check';
import { loggedIn, testApp } from '../helpers/api-app.js';
import { boxAnswer, boxLog, countRows, postBoxLogs } from '../helpers/box-logs.js';
import { createSession, seedParking } from '../helpers/parking.js';

const hostile = fc.oneof(
  fc.constant(null),
  fc.constant(undefined),
  fc.boolean(),
  fc.integer(),
  fc.constantFrom(0, -1, 2 ** 32, 2 ** 53, 1.5, Number.MAX_SAFE_INTEGER, 999),
  fc.double(),
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.constantFrom('', 'in', 'out', 'control', '2026-01-01 00:00:00', '2026-13-01 00:00:00', 'AAAA', 'AA==', '__proto__', 'constructor'),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.record({ latitude: fc.double(), longitude: fc.double() }),
  fc.nat(3000).map((n) => 'Q'.repeat(n * 4)),
);

const FIELDS = ['fo_user_id', 'smart_key_id', 'equipment_id', 'secured_parking_id', 'type', 'command', 'command_decrypted', 'response', 'response_decrypted', 'offline', 'created_at', 'point_attributes'];

test('generated box log batches: 201, 404, 413 or 422 (400 for bad JSON), never 500, never partial', async (t) => {
  const app = await testApp(t, { tokenTtlSeconds: 86_400, boxLogsMaxBatch: 20 });
  const tokens = await loggedIn(app);
  const parking = seedParking(app);
  app.ctx.parkings.setForwarding(parking.id, 'http://127.0.0.1:9/never', true, 'secret');
  const body = (await createSession(app, tokens.access_token, { parking_session: { secured_parking_id: parking.id } })).json<{ smart_key: { id: number; access_command: string } }>();
  const command = Buffer.from(body.smart_key.access_command, 'base64');
  const valid = () => boxLog({ foUserId: 1, smartKeyId: body.smart_key.id, box: parking.entrance, parkingId: parking.id, command, response: boxAnswer(parking.entrance, command) }).box_log;
  // A pool of genuine logs, so some batches repeat one (duplicates).
  const pool = Array.from({ length: 8 }, valid);

  const element = fc.oneof(
    fc.nat(pool.length - 1).map((i) => ({ box_log: pool[i] })),
    fc.tuple(fc.nat(pool.length - 1), fc.constantFrom(...FIELDS), hostile).map(([i, field, value]) => ({ box_log: { ...pool[i], [field]: value } })),
    fc.tuple(fc.nat(pool.length - 1), fc.constantFrom(...FIELDS)).map(([i, field]) => {
      const log: Record<string, unknown> = { ...pool[i] };
      delete log[field];
      return { box_log: log };
    }),
    hostile.map((value) => ({ box_log: value })),
    hostile,
  );
  const batch = fc.oneof(
    { weight: 6, arbitrary: fc.array(element, { maxLength: 25 }).map((box_logs) => JSON.stringify({ box_logs })) },
    { weight: 1, arbitrary: hostile.map((value) => JSON.stringify({ box_logs: value }) ?? 'null') },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 100 }) },
  );

  let accepted = 0;
  await fc.assert(
    fc.asyncProperty(batch, async (payload) => {
      const logsBefore = countRows(app, 'box_logs');
      const outboxBefore = countRows(app, 'forwarding_outbox');
      const response = await postBoxLogs(app, tokens.access_token, payload);
      const logsAfter = countRows(app, 'box_logs');
      if (response.statusCode === 201) {
        accepted += 1;
        const results = response.json<{ box_logs: { duplicate: boolean; verified: boolean }[] }>().box_logs;
        const fresh = results.filter((result) => !result.duplicate);
        // Only verified logs are queued (the parking does not forward unverified ones).
        const queued = fresh.filter((result) => result.verified).length;
        return results.length === (JSON.parse(payload) as { box_logs: unknown[] }).box_logs.length && logsAfter - logsBefore === fresh.length && countRows(app, 'forwarding_outbox') - outboxBefore === queued;
      }
      const error = response.json<{ error?: unknown; details?: unknown }>();
      return [400, 404, 413, 422].includes(response.statusCode) && typeof error.error === 'string' && Array.isArray(error.details) && logsAfter === logsBefore;
    }),
    { numRuns: 400 },
  );
  t.true(accepted > 0, 'some generated batches were valid');

  // Concurrent batches share one commit (group-commit.ts), each in its own
  // savepoint: together they store exactly what their 201s answer as fresh.
  let groupsAccepted = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(batch, { minLength: 2, maxLength: 6 }), async (payloads) => {
      const logsBefore = countRows(app, 'box_logs');
      const outboxBefore = countRows(app, 'forwarding_outbox');
      const responses = await Promise.all(payloads.map((payload) => postBoxLogs(app, tokens.access_token, payload)));
      let fresh = 0;
      let queued = 0;
      for (const response of responses) {
        if (response.statusCode === 201) {
          groupsAccepted += 1;
          const results = response.json<{ box_logs: { duplicate: boolean; verified: boolean }[] }>().box_logs.filter((result) => !result.duplicate);
          fresh += results.length;
          queued += results.filter((result) => result.verified).length;
        } else if (![400, 404, 413, 422].includes(response.statusCode) || typeof response.json<{ error?: unknown }>().error !== 'string') {
          return false;
        }
      }
      return countRows(app, 'box_logs') - logsBefore === fresh && countRows(app, 'forwarding_outbox') - outboxBefore === queued;
    }),
    { numRuns: 100 },
  );
  t.true(groupsAccepted > 0, 'some concurrent batches were valid');
  const { groups, units } = app.ctx.groupCommit.counters;
  t.true(units > groups, `some batches shared a commit (${units} in ${groups} transactions)`);
});
