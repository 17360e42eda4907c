// The sandbox payment page behind pay_url: both outcomes, an expired card,
// paid and unknown payments, hostile return_url values, and what the session
// responses show.
import test from 'ava';
import fc from 'fast-check';
import { safeReturnUrl } from '../../../api/payments/return-url.js';
import { loggedIn, testApp, type TestApp } from '../../helpers/api-app.js';
import { authGet, createSession, finalize, seedParking } from '../../helpers/parking.js';

async function sessionWithPayment(app: TestApp) {
  const tokens = await loggedIn(app);
  const parking = await seedParking(app, { name: 'Gare <Nord> & "Sud"' });
  const body = (
    await createSession(app, tokens.access_token, { parking_session: { secured_parking_id: parking.id } })
  ).json<{ pay_url: string; parking_session: { id: number } }>();
  return { tokens, path: new URL(body.pay_url).pathname, sessionId: body.parking_session.id };
}

function submit(app: TestApp, path: string, fields: Record<string, string>) {
  return app.app.inject({
    method: 'POST',
    url: path,
    payload: new URLSearchParams(fields).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
}

const stateOf = (html: string) => /id="payment-state">(\w+)</.exec(html)?.[1];

test('the page: self-contained HTML with the parking, amount and currency, Pay and Decline', async (t) => {
  const app = await testApp(t);
  const { path } = await sessionWithPayment(app);
  const page = await app.app.inject({ method: 'GET', url: path });
  t.is(page.statusCode, 200);
  t.regex(page.headers['content-type'] as string, /^text\/html; charset=utf-8/);
  t.regex(page.headers['content-security-policy'] as string, /default-src 'none'/);
  t.is(page.headers['referrer-policy'], 'no-referrer');
  t.regex(page.body, /<meta name="viewport"/);
  t.regex(page.body, /Gare &#60;Nord&#62; &#38; &#34;Sud&#34;/, 'the parking name, escaped');
  t.regex(page.body, /5\.00 EUR/);
  t.regex(page.body, /value="pay">Pay</);
  t.regex(page.body, /value="decline">Decline</);
  t.is(stateOf(page.body), 'pending');
  t.notRegex(page.body, /<script|src=|https?:\/\/(?!park)/i, 'no scripts, no external assets');
});

test('pay with 4242…: paid, shown on the page and in the session responses; a paid page says so', async (t) => {
  const app = await testApp(t);
  const { tokens, path } = await sessionWithPayment(app);
  const paid = await submit(app, path, { action: 'pay', card_number: '4242 4242 4242 4242', expiry: '12/30' });
  t.is(paid.statusCode, 200);
  t.is(stateOf(paid.body), 'paid');
  t.regex(paid.body, /accepted/);
  const current = (await authGet(app, tokens.access_token, '/api/car_driver/parking_sessions/current')).json<{
    parking_session: { payment_state: string };
  }>();
  t.is(current.parking_session.payment_state, 'paid');
  const again = await app.app.inject({ method: 'GET', url: path });
  t.is(again.statusCode, 200);
  t.regex(again.body, /already paid/);
  t.notRegex(again.body, /<form/);
  const payAgain = await submit(app, path, { action: 'decline' });
  t.is(stateOf(payAgain.body), 'paid', 'a paid payment never changes');
});

test('decline, and the declining test card: declined, shown, can be retried', async (t) => {
  const app = await testApp(t);
  const { tokens, path } = await sessionWithPayment(app);
  const declined = await submit(app, path, { action: 'decline' });
  t.is(stateOf(declined.body), 'declined');
  const state = async () =>
    (await authGet(app, tokens.access_token, '/api/car_driver/parking_sessions/current')).json<{
      parking_session: { payment_state: string };
    }>().parking_session.payment_state;
  t.is(await state(), 'declined');
  const card = await submit(app, path, { action: 'pay', card_number: '4000000000000002', expiry: '01/2031' });
  t.is(stateOf(card.body), 'declined');
  t.regex(card.body, /declined/);
  t.regex(card.body, /<form/, 'may try again');
  t.is(
    stateOf((await submit(app, path, { action: 'pay', card_number: '4242424242424242', expiry: '01/31' })).body),
    'paid',
  );
  t.is(await state(), 'paid');
});

test('an expired card, a bad expiry or an unknown card is refused and changes nothing', async (t) => {
  const app = await testApp(t); // the clock reads 2026-01-01
  const { path } = await sessionWithPayment(app);
  for (const [expiry, card, message] of [
    ['12/25', '4242424242424242', /expired/],
    ['13/30', '4242424242424242', /MM\/YY/],
    ['', '4242424242424242', /MM\/YY/],
    ['12/30', '5555555555554444', /test cards/],
  ] as const) {
    const response = await submit(app, path, { action: 'pay', card_number: card, expiry });
    t.is(response.statusCode, 422, `${expiry} ${card}`);
    t.regex(response.body, message);
    t.is(stateOf(response.body), 'pending');
  }
  t.is(
    stateOf((await submit(app, path, { action: 'pay', card_number: '4242424242424242', expiry: '01/26' })).body),
    'paid',
    'valid through the end of its month',
  );
});

test('an unknown payment: a page that says so, no 500; malformed posts get a page too', async (t) => {
  const app = await testApp(t);
  const unknown = await app.app.inject({ method: 'GET', url: '/pay/not-a-token' });
  t.is(unknown.statusCode, 404);
  t.regex(unknown.headers['content-type'] as string, /text\/html/);
  t.regex(unknown.body, /no payment at this address/);
  t.is((await submit(app, '/pay/not-a-token', { action: 'pay' })).statusCode, 404);
  const { path } = await sessionWithPayment(app);
  t.is((await submit(app, path, { action: 'steal' })).statusCode, 400);
  const json = await app.app.inject({
    method: 'POST',
    url: path,
    payload: '{"action":',
    headers: { 'content-type': 'application/json' },
  });
  t.true(json.statusCode >= 400 && json.statusCode < 500);
  t.regex(json.headers['content-type'] as string, /text\/html/);
});

test('return_url: http(s) and app schemes only, escaped; hostile values never echoed', async (t) => {
  const app = await testApp(t);
  const { path } = await sessionWithPayment(app);
  const link = async (value: string) => {
    const page = await app.app.inject({ method: 'GET', url: `${path}?return_url=${encodeURIComponent(value)}` });
    t.is(page.statusCode, 200);
    return { body: page.body, href: /id="return" href="([^"]*)"/.exec(page.body)?.[1] };
  };
  t.is((await link('parkbench-app://payment/done?x=1')).href, 'parkbench-app://payment/done?x=1');
  t.is((await link('https://app.example/back?a=1&b=2')).href, 'https://app.example/back?a=1&#38;b=2');
  for (const hostile of [
    'javascript:alert(1)',
    'JaVaScRiPt:alert(1)',
    ' javascript:alert(1)',
    'java\tscript:alert(1)',
    'data:text/html,<script>alert(1)</script>',
    'vbscript:msgbox(1)',
    'file:///etc/passwd',
    '//evil.example',
    'https:',
    'other-app://x',
    '"><script>alert(1)</script>',
    `https://x.example/${'a'.repeat(3000)}`,
  ]) {
    const { body, href } = await link(hostile);
    t.is(href, undefined, hostile);
    t.false(body.includes('<script>alert'), hostile);
    t.false(/javascript:/i.test(body), hostile);
  }
  const quoted = await link('https://x.example/"onmouseover="alert(1)');
  t.false(quoted.body.includes('"onmouseover="'), 'quotes are escaped or encoded');
  // The form keeps the link for the page after Pay.
  const after = await submit(app, path, { action: 'decline', return_url: 'parkbench-app://done' });
  t.regex(after.body, /id="return" href="parkbench-app:\/\/done"/);
});

test('safeReturnUrl never lets a non-allowed scheme through (generated)', (t) => {
  fc.assert(
    fc.property(
      fc.string({ maxLength: 60 }),
      fc.constantFrom('', 'javascript:', 'data:', ' https://', 'https://', 'parkbench-app:'),
      (rest, prefix) => {
        const result = safeReturnUrl(prefix + rest, ['parkbench-app']);
        return result === undefined || /^(https?:\/\/[^\s]|parkbench-app:)/.test(result);
      },
    ),
    { numRuns: 2000 },
  );
  t.pass();
});

test('finalize then pay every payment: the session is finished', async (t) => {
  const app = await testApp(t, { tokenTtlSeconds: 86_400 });
  const { tokens, path, sessionId } = await sessionWithPayment(app);
  app.clock.advance(150 * 60_000); // past the 120-minute window
  const body = (await finalize(app, tokens.access_token, sessionId)).json<{
    pay_url: string;
    parking_session: { state: string; payment_state: string };
  }>();
  t.is(body.parking_session.state, 'exiting');
  t.is(body.parking_session.payment_state, 'pending');
  await submit(app, path, { action: 'pay', card_number: '4242424242424242', expiry: '12/30' });
  t.is((await app.ctx.sessions.findById(sessionId))?.state, 'exiting', 'the overstay is still due');
  await submit(app, new URL(body.pay_url).pathname, {
    action: 'pay',
    card_number: '4242424242424242',
    expiry: '12/30',
  });
  t.is((await app.ctx.sessions.findById(sessionId))?.state, 'finished');
  t.is((await authGet(app, tokens.access_token, '/api/car_driver/parking_sessions/current')).statusCode, 404);
  t.is((await finalize(app, tokens.access_token, sessionId)).statusCode, 422);
});
