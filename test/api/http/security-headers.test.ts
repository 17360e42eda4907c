// Every response of the API says `X-Content-Type-Options: nosniff` (routes,
// their errors, the 404, and the answers written below the routes: a bad URL,
// an Expect header, bytes that are no HTTP); /docs and its assets add their
// Content-Security-Policy, X-Frame-Options DENY and Referrer-Policy (their
// rendering under that policy: docs-page.test.ts); the OpenAPI description
// keeps `<token>` as text.
import { readFileSync } from 'node:fs';
import test from 'ava';
import { DOCS_CSP } from '../../../api/http/docs.js';
import { loggedIn, testApp } from '../../helpers/api-app.js';
import { rawRequest } from '../../helpers/raw-http.js';

test('nosniff on every answer: routes, errors, the 404, and what is written below the routes', async (t) => {
  const app = await testApp(t);
  const tokens = await loggedIn(app);
  const answers = {
    health: await app.app.inject({ method: 'GET', url: '/health' }),
    me: await app.app.inject({
      method: 'GET',
      url: '/api/car_driver/me',
      headers: { authorization: `Bearer ${tokens.access_token}` },
    }),
    unauthorized: await app.app.inject({ method: 'GET', url: '/api/car_driver/me' }),
    notFound: await app.app.inject({ method: 'GET', url: '/no/such/route' }),
    badJson: await app.app.inject({
      method: 'POST',
      url: '/api/oauth/token',
      headers: { 'content-type': 'application/json' },
      payload: '{',
    }),
    badUrl: await app.app.inject({ method: 'GET', url: '/api/car_driver/parking_sessions/%E0%A4%A' }),
    openapi: await app.app.inject({ method: 'GET', url: '/openapi.json' }),
  };
  t.is(answers.me.statusCode, 200);
  t.is(answers.unauthorized.statusCode, 401);
  t.is(answers.notFound.statusCode, 404);
  t.is(answers.badJson.statusCode, 400);
  t.is(answers.badUrl.statusCode, 400);
  for (const [name, answer] of Object.entries(answers)) {
    t.is(answer.headers['x-content-type-options'], 'nosniff', name);
    t.is(answer.headers['content-security-policy'], undefined, `${name}: the docs' policy stays on /docs`);
  }

  await app.app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.app.server.address();
  const base = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
  const expectation = await rawRequest(base, 'GET /health HTTP/1.1\r\nHost: x\r\nExpect: 100-nothing\r\n\r\n');
  t.is(expectation.status, 417);
  t.is(expectation.headers['x-content-type-options'], 'nosniff');
  const noHttp = await rawRequest(
    base,
    'GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n',
  );
  t.is(noHttp.status, 400);
  t.is(noHttp.headers['x-content-type-options'], 'nosniff');
});

test('/docs and its assets: Content-Security-Policy, X-Frame-Options DENY, nosniff, no Referer', async (t) => {
  const app = await testApp(t);
  for (const url of [
    '/docs',
    '/docs/',
    '/docs/static/swagger-ui-bundle.js',
    '/docs/static/swagger-ui.css',
    '/docs/json',
  ]) {
    const answer = await app.app.inject({ method: 'GET', url });
    t.true(answer.statusCode < 400, `${url}: ${answer.statusCode}`);
    t.like(
      answer.headers,
      {
        'content-security-policy': DOCS_CSP,
        'x-frame-options': 'DENY',
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
      },
      url,
    );
  }
  t.regex(DOCS_CSP, /frame-ancestors 'none'/);
  const reference = readFileSync(new URL('../../../docs/api.md', import.meta.url), 'utf8');
  t.true(reference.includes(`Content-Security-Policy: ${DOCS_CSP}\n`), 'docs/api.md shows the policy sent');
  t.notRegex(DOCS_CSP, /unsafe-inline|unsafe-eval/);
  t.regex(
    DOCS_CSP,
    /style-src 'self' 'sha256-RL3ie0nH\+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w=';/,
    "Swagger UI's logo stylesheet, by its hash alone",
  );
});

test('the OpenAPI description keeps "Authorization: Bearer <token>" as text (Swagger UI renders HTML in Markdown)', async (t) => {
  const app = await testApp(t);
  const description = (await app.app.inject({ method: 'GET', url: '/openapi.json' })).json<{
    info: { description: string };
  }>().info.description;
  t.true(description.includes('send Authorization: Bearer &lt;token&gt;.'));
  t.true(description.includes('Authorization: Bearer &lt;operator token&gt;.'));
  t.notRegex(description, /<[a-z]/i, 'no text that reads as an HTML tag');
});
