// U+0000 anywhere in what a request sends (api/nul-characters.ts): a 422
// naming where, before any database sees it. PostgreSQL's text cannot hold
// it, so without this the insert failed with a 500 (found by the generated
// box-log batches on PostgreSQL); on SQLite the answer is the same.
import test from 'ava';
import { nulPath } from '../../../api/http/nul-characters.js';
import { errorBody, loggedIn, passwordGrant, register, DRIVER, testApp } from '../../helpers/api-app.js';
import { boxAnswer, boxLog, countRows, postBoxLogs } from '../../helpers/box-logs.js';
import { createSession, seedParking } from '../../helpers/parking.js';

test('nulPath: the first string or key holding U+0000, dotted as validation details; none in clean values', (t) => {
  t.is(nulPath({ a: [{ b: 'ok' }, { c: 'x\u0000' }] }), 'a[1].c');
  t.is(nulPath({ ['k\u0000']: 1 }), 'k\u0000');
  t.is(nulPath({ 'a/b~c': ['\u0000'] }), 'a/b~c[0]');
  t.is(nulPath('\u0000'), '$');
  t.is(nulPath({ a: ['ok', 1, null, true, { b: '\\u0000 as text' }] }), undefined);
  t.is(nulPath(undefined), undefined);
  // A million nested arrays: walked without recursion.
  let deep: unknown = 'end\u0000';
  for (let depth = 0; depth < 1_000_000; depth++) deep = [deep];
  t.is(nulPath(deep), '[0]'.repeat(1_000_000));
});

test('a box log with U+0000 in a text field: 422 naming it, nothing of the batch stored', async (t) => {
  const app = await testApp(t);
  const { access_token: token } = await loggedIn(app);
  const parking = await seedParking(app);
  const created = (await createSession(app, token, { parking_session: { secured_parking_id: parking.id } })).json<{
    smart_key: { id: number; access_command: string };
  }>();
  const command = Buffer.from(created.smart_key.access_command, 'base64');
  const good = boxLog({
    foUserId: 1,
    smartKeyId: created.smart_key.id,
    box: parking.entrance,
    parkingId: parking.id,
    command,
    response: boxAnswer(parking.entrance, command),
  });
  const bad = structuredClone(good);
  bad.box_log.response_decrypted = '\u0000';
  const response = await postBoxLogs(app, token, { box_logs: [good, bad] });
  t.is(response.statusCode, 422);
  t.like(errorBody(t, response), {
    error: 'validation_failed',
    details: [
      { path: 'box_logs[1].box_log.response_decrypted', message: 'must not contain the NUL character (U+0000)' },
    ],
  });
  t.is(await countRows(app, 'box_logs'), 0);
  t.is((await postBoxLogs(app, token, { box_logs: [good] })).statusCode, 201, 'the same batch without it is stored');
});

test("registration, login, a query string and a path parameter: the same refusal in each route's own error body; the text \\u0000 is no NUL", async (t) => {
  const app = await testApp(t);
  const registered = await register(app, { ...DRIVER, first_name: 'Ada\u0000' });
  t.is(registered.statusCode, 422);
  t.like(errorBody(t, registered), { details: [{ path: 'api_car_driver_fo_user.first_name' }] });
  const client = await app.app.inject({
    method: 'POST',
    url: '/api/car_driver',
    payload: { api_car_driver_fo_user: DRIVER, client_app_id: 'test-client\u0000', client_secret: 'x' },
  });
  // The client is looked up before the body is judged (spec): no client has that id.
  t.is(client.statusCode, 401);
  t.like(errorBody(t, client), { error: 'invalid_client' });
  // OAuth answers RFC 6749's body; a form field as well as JSON.
  const login = await passwordGrant(app, 'ada\u0000@example.com');
  t.is(login.statusCode, 400);
  t.deepEqual(login.json(), {
    error: 'invalid_request',
    error_description: 'username must not contain the NUL character (U+0000).',
  });
  const form = await app.app.inject({
    method: 'POST',
    url: '/api/oauth/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: `grant_type=password&username=ada%00%40example.com&password=x&client_app_id=test-client&client_secret=x`,
  });
  t.is(form.statusCode, 400);
  t.like(form.json(), { error: 'invalid_request' });
  const { access_token: token } = await loggedIn(app);
  const query = await app.app.inject({
    method: 'GET',
    url: '/api/car_driver/parking_sessions?status=%00',
    headers: { authorization: `Bearer ${token}` },
  });
  t.is(query.statusCode, 422);
  t.like(errorBody(t, query), { details: [{ path: 'status' }] });
  const parameter = await app.app.inject({
    method: 'PUT',
    url: '/api/car_driver/parking_sessions/1%00/finalize',
    headers: { authorization: `Bearer ${token}` },
  });
  t.is(parameter.statusCode, 422);
  t.like(errorBody(t, parameter), {
    details: [{ path: 'id', message: 'must not contain the NUL character (U+0000)' }],
  });
  // The six characters \u0000 as text (an escaped backslash) are no NUL.
  const text = await register(app, { ...DRIVER, email: 'grace@example.com', first_name: 'Ada\\u0000' });
  t.is(text.statusCode, 201, text.body);
  t.is(text.json<{ first_name: string }>().first_name, 'Ada\\u0000');
});

test('the payment form: a field with U+0000 gets the HTML error page, 422', async (t) => {
  const app = await testApp(t);
  const page = await app.app.inject({
    method: 'POST',
    url: '/pay/some-token',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'action=pay&card_number=4242%00&expiry=12/30',
  });
  t.is(page.statusCode, 422);
  t.regex(String(page.headers['content-type']), /^text\/html/);
});
