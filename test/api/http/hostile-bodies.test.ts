// Generated hostile bodies (wrong types, huge strings, deep nesting, unicode,
// nulls) to every route: never a 500, always the route's error body.
import test from 'ava';
import fc from 'fast-check';
import { loggedIn, testApp } from '../../helpers/api-app.js';
import { seedParking } from '../../helpers/parking.js';

const leaf = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double(),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.constantFrom('', ' ', '\u0000', 'a@b.co', '𝔘𝔫𝔦𝔠𝔬𝔡𝔢', '__proto__', 'password', 'refresh_token'),
  fc.nat(200_000).map((n) => 'x'.repeat(n)),
);

const fields = [
  'api_car_driver_fo_user',
  'client_app_id',
  'client_secret',
  'grant_type',
  'username',
  'password',
  'refresh_token',
  'client_id',
  'token',
  'token_type_hint',
  'email',
  'first_name',
];

const value = fc.letrec((tie) => ({
  any: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, tie('array'), tie('object')),
  array: fc.array(tie('any'), { maxLength: 5 }),
  object: fc.dictionary(fc.oneof(fc.constantFrom(...fields), fc.string({ maxLength: 10 })), tie('any'), { maxKeys: 6 }),
})).any;

/** Nesting thousands deep, as raw JSON text. */
const deep = fc.integer({ min: 1, max: 5000 }).map((depth) => `${'{"a":['.repeat(depth)}1${']}'.repeat(depth)}`);

const body = fc.oneof(
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- JSON.stringify(undefined) is undefined, whatever its type says
  value.map((v) => JSON.stringify(v) ?? 'null'),
  deep,
  fc.string({ unit: 'binary', maxLength: 200 }),
);

const ROUTES = [
  { url: '/api/car_driver', oauth: false },
  { url: '/api/oauth/token', oauth: true },
  { url: '/api/oauth/revoke', oauth: true },
  { url: '/api/car_driver/me', oauth: false, method: 'GET' as const },
];

test("no generated body gives a 500, and every error has the route's error body", async (t) => {
  const app = await testApp(t, { loginMaxFailuresPerAddress: 1_000_000, loginMaxFailuresPerUsername: 1_000_000 });
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...ROUTES),
      body,
      fc.constantFrom('application/json', 'application/x-www-form-urlencoded', 'text/plain'),
      async (route, payload, type) => {
        const response = await app.app.inject({
          method: route.method ?? 'POST',
          url: route.url,
          payload,
          headers: { 'content-type': type },
        });
        if (response.statusCode >= 500) return false;
        if (response.statusCode < 400) return true;
        const parsed = response.json<Record<string, unknown>>();
        if (route.oauth) return typeof parsed.error === 'string' && typeof parsed.error_description === 'string';
        return typeof parsed.error === 'string' && typeof parsed.message === 'string' && Array.isArray(parsed.details);
      },
    ),
    { numRuns: 400 },
  );
  t.pass();
});

test('generated user fields with a valid client: 201 or 422, never 500', async (t) => {
  const app = await testApp(t);
  const user = fc.record(
    { email: value, password: value, password_confirmation: value, first_name: value, last_name: value, phone: value },
    { requiredKeys: [] },
  );
  await fc.assert(
    fc.asyncProperty(user, async (fields) => {
      const response = await app.app.inject({
        method: 'POST',
        url: '/api/car_driver',
        payload: { api_car_driver_fo_user: fields, ...app.client },
      });
      // 400: a "__proto__" key anywhere is refused as prototype poisoning.
      return [201, 400, 422, 413].includes(response.statusCode);
    }),
    { numRuns: 200 },
  );
  t.pass();
});

test('generated session bodies with a valid token: 201, 400, 404, 413 or 422, never 500', async (t) => {
  const app = await testApp(t);
  const tokens = await loggedIn(app);
  const parking = await seedParking(app);
  const sessionBody = fc.oneof(
    value,
    fc.record({ parking_session: value }),
    fc.record({
      parking_session: fc.record({ secured_parking_id: fc.oneof(value, fc.constant(parking.id), fc.integer()) }),
    }),
  );
  await fc.assert(
    fc.asyncProperty(sessionBody, async (payload) => {
      const response = await app.app.inject({
        method: 'POST',
        url: '/api/car_driver/parking_sessions',
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- JSON.stringify(undefined) is undefined, whatever its type says
        payload: JSON.stringify(payload) ?? 'null',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens.access_token}` },
      });
      // A created session is finished at once, and the driver's bucket of
      // creations filled again (hundreds of runs in one instant of the
      // test's clock), so the next run may create one too.
      if (response.statusCode === 201) {
        await app.ctx.store.kysely.updateTable('parking_sessions').set({ state: 'finished' }).execute();
        await app.ctx.store.kysely.deleteFrom('session_create_limits').execute();
      }
      const parsed = response.json<Record<string, unknown>>();
      return (
        [201, 400, 404, 413, 422].includes(response.statusCode) &&
        (response.statusCode === 201 || typeof parsed.error === 'string')
      );
    }),
    { numRuns: 300 },
  );
  t.pass();
});

test('generated forms to the payment page: never a 500, always HTML', async (t) => {
  const app = await testApp(t);
  await fc.assert(
    fc.asyncProperty(
      fc.dictionary(
        fc.constantFrom('action', 'card_number', 'expiry', 'return_url', 'x'),
        fc.string({ unit: 'binary', maxLength: 50 }),
      ),
      fc.string({ maxLength: 40 }),
      async (form, token) => {
        const response = await app.app.inject({
          method: 'POST',
          url: `/pay/${encodeURIComponent(token)}`,
          payload: new URLSearchParams(form).toString(),
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        });
        return response.statusCode < 500 && /text\/html/.test(String(response.headers['content-type']));
      },
    ),
    { numRuns: 200 },
  );
  t.pass();
});

/** One character off the "printable text" rule of names and phone. */
const offPrintable = fc
  .oneof(
    fc.integer({ min: 0x00, max: 0x1f }),
    fc.integer({ min: 0x7f, max: 0x9f }),
    fc.integer({ min: 0xd800, max: 0xdfff }),
    fc.constantFrom(
      0xad,
      0x200b,
      0x200e,
      0x200f,
      0x202a,
      0x202b,
      0x202c,
      0x202d,
      0x202e,
      0x2028,
      0x2029,
      0x2060,
      0x2066,
      0x2067,
      0x2068,
      0x2069,
      0xfeff,
    ),
  )
  .map((code) => String.fromCharCode(code));

test('generated names and phones holding a character off "printable text": 422 naming that field', async (t) => {
  const app = await testApp(t);
  let n = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.string({ unit: 'grapheme-ascii', maxLength: 10 }),
      offPrintable,
      fc.string({ unit: 'grapheme', maxLength: 5 }),
      fc.constantFrom('first_name', 'last_name', 'phone'),
      async (before, bad, after, field) => {
        n += 1;
        const fields = {
          email: `hostile${n}@example.com`,
          password: 'long enough',
          password_confirmation: 'long enough',
          first_name: 'Ada',
          last_name: 'Lovelace',
          phone: '+1 555',
          [field]: `${before}${bad}${after}`,
        };
        const response = await app.app.inject({
          method: 'POST',
          url: '/api/car_driver',
          payload: { api_car_driver_fo_user: fields, ...app.client },
        });
        return (
          response.statusCode === 422 &&
          response
            .json<{ details: { path: string }[] }>()
            .details.some((detail) => detail.path === `api_car_driver_fo_user.${field}`)
        );
      },
    ),
    { numRuns: 200 },
  );
  t.pass();
});

/** Any UTF-16 code unit, lone surrogates included ('binary' strings are well formed). */
const codeUnit = fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code));

test('generated names of any UTF-16 code units: a 201 stores exactly the trimmed name as valid UTF-8', async (t) => {
  const app = await testApp(t);
  let n = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.oneof(
        fc.string({ unit: codeUnit, minLength: 1, maxLength: 20 }),
        fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }),
      ),
      async (name) => {
        n += 1;
        const email = `any${n}@example.com`;
        const fields = {
          email,
          password: 'long enough',
          password_confirmation: 'long enough',
          first_name: name,
          last_name: 'Lovelace',
          phone: '+1 555',
        };
        const response = await app.app.inject({
          method: 'POST',
          url: '/api/car_driver',
          payload: { api_car_driver_fo_user: fields, ...app.client },
        });
        if (response.statusCode === 422) return true;
        if (response.statusCode !== 201) return false;
        const row = await app.ctx.store.kysely
          .selectFrom('users')
          .select('first_name')
          .where('email', '=', email)
          .executeTakeFirstOrThrow();
        // Stored as given, trimmed: a name the database could not hold as
        // UTF-8 (a lone surrogate) would come back altered, and was refused.
        return row.first_name === name.trim();
      },
    ),
    { numRuns: 300 },
  );
  t.pass();
});
