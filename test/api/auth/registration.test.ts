import test from 'ava';
import { DRIVER, errorBody, register, testApp } from '../../helpers/api-app.js';
import { rowCount } from '../../helpers/store-rows.js';

test('201 with the user, never the password; email stored lowercased', async (t) => {
  const app = await testApp(t);
  const response = await register(app, { ...DRIVER, email: 'Ada@Example.COM' });
  t.is(response.statusCode, 201);
  t.deepEqual(Object.keys(response.json<object>()).sort(), ['email', 'first_name', 'id', 'last_name', 'phone']);
  t.like(response.json(), { email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace', phone: DRIVER.phone });
  t.false(response.body.includes(DRIVER.password));
  const stored = await app.ctx.store.kysely.selectFrom('users').select('password_hash').executeTakeFirstOrThrow();
  t.regex(stored.password_hash, /^scrypt\$10\$8\$1\$/);
});

test('401 for an unknown client, a wrong secret or no client at all, before any validation', async (t) => {
  const app = await testApp(t);
  for (const client of [
    { client_app_id: 'nope', client_secret: app.client.client_secret },
    { client_app_id: app.client.client_app_id, client_secret: 'wrong' },
    {},
    { client_app_id: 5, client_secret: [] },
  ]) {
    const response = await app.app.inject({
      method: 'POST',
      url: '/api/car_driver',
      payload: { api_car_driver_fo_user: { email: 'bad' }, ...client },
    });
    t.is(response.statusCode, 401);
    t.is(errorBody(t, response).error, 'invalid_client');
  }
});

test('422 with one detail per bad field', async (t) => {
  const app = await testApp(t);
  const response = await register(app, {
    email: 'not-an-email',
    password: 'short',
    password_confirmation: 'short',
    first_name: '  ',
    last_name: 7,
  });
  t.is(response.statusCode, 422);
  const body = errorBody(t, response);
  t.is(body.error, 'validation_failed');
  const byPath = Object.fromEntries(body.details.map((detail) => [detail.path, detail.message]));
  t.deepEqual(byPath, {
    'api_car_driver_fo_user.email': 'must be an email address',
    'api_car_driver_fo_user.password': 'must be at least 8 characters',
    'api_car_driver_fo_user.first_name':
      'must be printable text, not blank (no control, format or invisible characters)',
    'api_car_driver_fo_user.last_name': 'must be of type string',
    'api_car_driver_fo_user.phone': 'is required',
  });
});

test('422 when the confirmation differs', async (t) => {
  const app = await testApp(t);
  const response = await register(app, { ...DRIVER, password_confirmation: 'something else' });
  t.is(response.statusCode, 422);
  t.deepEqual(errorBody(t, response).details, [
    { path: 'api_car_driver_fo_user.password_confirmation', message: 'must match password' },
  ]);
});

test('422 when the email is taken, whatever its case', async (t) => {
  const app = await testApp(t);
  t.is((await register(app)).statusCode, 201);
  const response = await register(app, { ...DRIVER, email: 'ADA@example.com' });
  t.is(response.statusCode, 422);
  t.deepEqual(errorBody(t, response).details, [{ path: 'api_car_driver_fo_user.email', message: 'is already taken' }]);
});

test('concurrent registrations of one email: one 201, one 422', async (t) => {
  const app = await testApp(t);
  const statuses = (await Promise.all([register(app), register(app), register(app)]))
    .map((response) => response.statusCode)
    .sort();
  t.deepEqual(statuses, [201, 422, 422]);
});

test('422 when the user object is missing or not an object', async (t) => {
  const app = await testApp(t);
  const missing = await app.app.inject({ method: 'POST', url: '/api/car_driver', payload: { ...app.client } });
  t.is(missing.statusCode, 422);
  t.deepEqual(errorBody(t, missing).details, [{ path: 'api_car_driver_fo_user', message: 'is required' }]);
  const wrong = await app.app.inject({
    method: 'POST',
    url: '/api/car_driver',
    payload: { api_car_driver_fo_user: 'x', ...app.client },
  });
  t.is(wrong.statusCode, 422);
});

test('unknown fields are ignored', async (t) => {
  const app = await testApp(t);
  const response = await register(app, { ...DRIVER, admin: true, id: 99 });
  t.is(response.statusCode, 201);
  t.is(response.json<{ id: number }>().id, 1);
});

/** Off the "printable text" rule: controls, format characters (bidi overrides,
 * zero-width space), lone surrogates, line separators, and nothing visible. */
const NOT_PRINTABLE = [
  'A\u0000B',
  'Ann\u0007',
  'A\u001b[31mB',
  'A\u007fB',
  'A\u0085B',
  '\u202Eevil',
  'A\u2066B',
  'A\u200BB',
  '\u200B',
  ' \u200B ',
  '\u200C',
  '\uD800',
  'A\uDC00B',
  'A\u2028B',
  'A\tB',
  'A\nB',
  '\uFEFF',
];

test('names and phone must be printable text: 422 naming the field for NUL, controls, bidi overrides, lone surrogates, invisible-only values', async (t) => {
  const app = await testApp(t);
  for (const field of ['first_name', 'last_name', 'phone']) {
    for (const bad of NOT_PRINTABLE) {
      const response = await register(app, { ...DRIVER, [field]: bad });
      t.is(response.statusCode, 422, `${field} ${JSON.stringify(bad)}`);
      t.deepEqual(errorBody(t, response).details, [
        {
          path: `api_car_driver_fo_user.${field}`,
          message: 'must be printable text, not blank (no control, format or invisible characters)',
        },
      ]);
    }
  }
  t.is(await rowCount(app.ctx.store, 'users'), 0);
});

test('printable text in any script is taken and stored as valid UTF-8 (ZWNJ inside a Persian name too)', async (t) => {
  const app = await testApp(t);
  const names = ['Zoë', 'Nguyễn Thị', 'علی‌رضا', '李 小龍', "O'Brien-Smith", 'Ａｄａ', '🚗 Ada'];
  for (const [index, name] of names.entries()) {
    const response = await register(app, {
      ...DRIVER,
      email: `driver${index}@example.com`,
      first_name: name,
      phone: '+33 6 12 34 56 78',
    });
    t.is(response.statusCode, 201, `${name}: ${response.body}`);
    const row = await app.ctx.store.kysely
      .selectFrom('users')
      .select('first_name')
      .where('email', '=', `driver${index}@example.com`)
      .executeTakeFirstOrThrow();
    t.is(row.first_name, name);
  }
});
