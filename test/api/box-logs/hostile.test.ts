// Generated hostile box log bodies: never a 500, never a partial batch. A
// refused batch stores nothing; an accepted one stores exactly the logs it
// answers as not duplicate, alone or sharing a commit with concurrent ones.
import test from 'ava';
import fc from 'fast-check';
import { errorBody, loggedIn, testApp } from '../../helpers/api-app.js';
import { parseCreatedAt } from '../../../api/http/time.js';
import { boxAnswer, boxLog, countRows, postBoxLogs } from '../../helpers/box-logs.js';
import { createSession, seedParking } from '../../helpers/parking.js';

const hostile = fc.oneof(
  fc.constant(null),
  fc.constant(undefined),
  fc.boolean(),
  fc.integer(),
  fc.constantFrom(0, -1, 2 ** 32, 2 ** 53, 1.5, Number.MAX_SAFE_INTEGER, 999),
  fc.double(),
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.constantFrom(
    '',
    'in',
    'out',
    'control',
    '2026-01-01 00:00:00',
    '2026-13-01 00:00:00',
    'AAAA',
    'AA==',
    '__proto__',
    'constructor',
  ),
  // Off their format: years outside 0001..9999, lone surrogates, NUL.
  fc.constantFrom(
    '0000-01-01 00:00:00',
    '+10000-01-01 00:00:00',
    '-0001-01-01 00:00:00',
    '0099-12-31 23:59:59',
    '\uD800',
    'ACCESS \uDC00 key=1',
    '\u0000',
  ),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.record({ latitude: fc.double(), longitude: fc.double() }),
  fc.nat(3000).map((n) => 'Q'.repeat(n * 4)),
);

const FIELDS = [
  'fo_user_id',
  'smart_key_id',
  'equipment_id',
  'secured_parking_id',
  'type',
  'command',
  'command_decrypted',
  'response',
  'response_decrypted',
  'offline',
  'created_at',
  'point_attributes',
];

test('generated box log batches: 201, 404, 413 or 422 (400 for bad JSON), never 500, never partial', async (t) => {
  const app = await testApp(t, { tokenTtlSeconds: 86_400, boxLogsMaxBatch: 20 });
  const tokens = await loggedIn(app);
  const parking = await seedParking(app);
  await app.ctx.parkings.setForwarding(parking.id, 'http://127.0.0.1:9/never', true, 'secret');
  const body = (
    await createSession(app, tokens.access_token, { parking_session: { secured_parking_id: parking.id } })
  ).json<{ smart_key: { id: number; access_command: string } }>();
  const command = Buffer.from(body.smart_key.access_command, 'base64');
  const valid = () =>
    boxLog({
      foUserId: 1,
      smartKeyId: body.smart_key.id,
      box: parking.entrance,
      parkingId: parking.id,
      command,
      response: boxAnswer(parking.entrance, command),
    }).box_log;
  // A pool of genuine logs, so some batches repeat one (duplicates).
  const pool = Array.from({ length: 8 }, valid);

  const element = fc.oneof(
    fc.nat(pool.length - 1).map((i) => ({ box_log: pool[i] })),
    fc
      .tuple(fc.nat(pool.length - 1), fc.constantFrom(...FIELDS), hostile)
      .map(([i, field, value]) => ({ box_log: { ...pool[i], [field]: value } })),
    fc.tuple(fc.nat(pool.length - 1), fc.constantFrom(...FIELDS)).map(([i, field]) => {
      const { [field]: _missing, ...log }: Record<string, unknown> = { ...pool[i] };
      return { box_log: log };
    }),
    hostile.map((value) => ({ box_log: value })),
    hostile,
  );
  const batch = fc.oneof(
    { weight: 6, arbitrary: fc.array(element, { maxLength: 25 }).map((box_logs) => JSON.stringify({ box_logs })) },
    { weight: 1, arbitrary: hostile.map((value) => JSON.stringify({ box_logs: value })) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 100 }) },
  );

  let accepted = 0;
  await fc.assert(
    fc.asyncProperty(batch, async (payload) => {
      const logsBefore = await countRows(app, 'box_logs');
      const outboxBefore = await countRows(app, 'forwarding_outbox');
      const response = await postBoxLogs(app, tokens.access_token, payload);
      const logsAfter = await countRows(app, 'box_logs');
      if (response.statusCode === 201) {
        accepted += 1;
        const results = response.json<{ box_logs: { duplicate: boolean; verified: boolean }[] }>().box_logs;
        const fresh = results.filter((result) => !result.duplicate);
        // Only verified logs are queued (the parking does not forward unverified ones).
        const queued = fresh.filter((result) => result.verified).length;
        return (
          results.length === (JSON.parse(payload) as { box_logs: unknown[] }).box_logs.length &&
          logsAfter - logsBefore === fresh.length &&
          (await countRows(app, 'forwarding_outbox')) - outboxBefore === queued
        );
      }
      const error = response.json<{ error?: unknown; details?: unknown }>();
      return (
        [400, 404, 413, 422].includes(response.statusCode) &&
        typeof error.error === 'string' &&
        Array.isArray(error.details) &&
        logsAfter === logsBefore
      );
    }),
    { numRuns: 400 },
  );
  t.true(accepted > 0, 'some generated batches were valid');

  // Concurrent batches share one commit (group-commit.ts), each in its own
  // savepoint: together they store exactly what their 201s answer as fresh.
  let groupsAccepted = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(batch, { minLength: 2, maxLength: 6 }), async (payloads) => {
      const logsBefore = await countRows(app, 'box_logs');
      const outboxBefore = await countRows(app, 'forwarding_outbox');
      const responses = await Promise.all(payloads.map((payload) => postBoxLogs(app, tokens.access_token, payload)));
      let fresh = 0;
      let queued = 0;
      for (const response of responses) {
        if (response.statusCode === 201) {
          groupsAccepted += 1;
          const results = response
            .json<{ box_logs: { duplicate: boolean; verified: boolean }[] }>()
            .box_logs.filter((result) => !result.duplicate);
          fresh += results.length;
          queued += results.filter((result) => result.verified).length;
        } else if (
          ![400, 404, 413, 422].includes(response.statusCode) ||
          typeof response.json<{ error?: unknown }>().error !== 'string'
        ) {
          return false;
        }
      }
      return (
        (await countRows(app, 'box_logs')) - logsBefore === fresh &&
        (await countRows(app, 'forwarding_outbox')) - outboxBefore === queued
      );
    }),
    { numRuns: 100 },
  );
  t.true(groupsAccepted > 0, 'some concurrent batches were valid');
  const { groups, units } = app.ctx.groupCommit.counters;
  // The batches of a turn share a commit (api/box-logs/http-batches.ts), on both engines.
  t.true(units > groups, `some batches shared a commit (${units} in ${groups} transactions)`);
});

test('values off their format are 422 naming the field: created_at in year 0000 or past 9999, a lone surrogate in a text', async (t) => {
  const app = await testApp(t, { tokenTtlSeconds: 86_400 });
  const tokens = await loggedIn(app);
  const parking = await seedParking(app);
  const valid = boxLog({
    foUserId: 1,
    smartKeyId: null,
    box: parking.entrance,
    parkingId: parking.id,
    command: null,
    response: null,
  }).box_log;
  const cases: [string, string][] = [
    ['created_at', '0000-01-01 00:00:00'],
    ['created_at', '+10000-01-01 00:00:00'],
    ['created_at', '-0001-01-01 00:00:00'],
    ['command_decrypted', 'ACCESS \uD800'],
    ['response_decrypted', '\uDFFF OK'],
  ];
  for (const [field, value] of cases) {
    const response = await postBoxLogs(app, tokens.access_token, {
      box_logs: [{ box_log: { ...valid, [field]: value } }],
    });
    t.is(response.statusCode, 422, `${field} ${JSON.stringify(value)}`);
    t.deepEqual(
      errorBody(t, response).details.map((detail) => detail.path),
      [`box_logs[0].box_log.${field}`],
    );
  }
  t.is(await countRows(app, 'box_logs'), 0);
  const first = await postBoxLogs(app, tokens.access_token, {
    box_logs: [{ box_log: { ...valid, created_at: '0001-01-01 00:00:00', command_decrypted: 'ACCESS 🚗 ok' } }],
  });
  t.is(first.statusCode, 201, first.body);
});

test('created_at: every second of years 0001..9999 reads as itself (no 1900 for years below 100); year 0000 reads as nothing', (t) => {
  const sqlTime = (date: Date) => {
    const iso = date.toISOString();
    return `${iso.slice(0, 10)} ${iso.slice(11, 19)}`;
  };
  fc.assert(
    fc.property(
      fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true }),
      (date) => {
        const whole = Math.floor(date.getTime() / 1000) * 1000;
        return parseCreatedAt(sqlTime(date)) === whole;
      },
    ),
    {
      numRuns: 2000,
      examples: [
        [new Date('0001-01-01T00:00:00Z')],
        [new Date('0099-12-31T23:59:59Z')],
        [new Date('9999-12-31T23:59:59Z')],
      ],
    },
  );
  t.is(parseCreatedAt('0000-01-01 00:00:00'), undefined);
  t.is(parseCreatedAt('0000-12-31 23:59:59'), undefined);
});
