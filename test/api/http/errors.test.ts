// Errors node and fastify answer below the routes, over a raw socket (an HTTP
// client library refuses to send most of these): each gives the registry's
// error body, or the payment page's HTML on /pay/.
import { gzipSync } from 'node:zlib';
import test, { type ExecutionContext } from 'ava';
import { API_ERRORS } from '../../../api/http/errors.js';
import { testApp } from '../../helpers/api-app.js';
import { rawRequest, type RawResponse } from '../../helpers/raw-http.js';

const HOST = 'Host: localhost\r\n';
const gzipped = gzipSync('{"api_car_driver_fo_user":{}}');

function gzipRequest(path: string, type: string): Buffer {
  const head = `POST ${path} HTTP/1.1\r\n${HOST}Content-Type: ${type}\r\nContent-Encoding: gzip\r\nContent-Length: ${gzipped.length}\r\nConnection: close\r\n\r\n`;
  return Buffer.concat([Buffer.from(head), gzipped]);
}

/** Each case: the bytes sent, and the status and registry code due (HTML on /pay/). */
const CASES: { name: string; request: string | Buffer; status: number; code?: keyof typeof API_ERRORS; html?: true }[] =
  [
    {
      name: 'both Content-Length and Transfer-Encoding',
      request: `POST /api/car_driver HTTP/1.1\r\n${HOST}Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
      status: 400,
      code: 'bad_request',
    },
    {
      name: 'two Content-Lengths',
      request: `POST /api/car_driver HTTP/1.1\r\n${HOST}Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello`,
      status: 400,
      code: 'bad_request',
    },
    {
      name: 'a NUL in a header',
      request: `GET /health HTTP/1.1\r\n${HOST}X-Probe: a\0b\r\n\r\n`,
      status: 400,
      code: 'bad_request',
    },
    {
      name: 'a bad chunk size',
      request: `POST /api/car_driver HTTP/1.1\r\n${HOST}Transfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\nzz\r\n`,
      status: 400,
      code: 'bad_request',
    },
    { name: 'an invalid method', request: `F(O /health HTTP/1.1\r\n${HOST}\r\n`, status: 400, code: 'bad_request' },
    {
      name: 'huge headers',
      request: `GET /health HTTP/1.1\r\n${HOST}X-Probe: ${'a'.repeat(20_000)}\r\n\r\n`,
      status: 431,
      code: 'header_fields_too_large',
    },
    {
      name: 'a bad percent-encoding (FST_ERR_BAD_URL)',
      request: `GET /api/car_driver/smart_keys/%ff/open HTTP/1.1\r\n${HOST}\r\n`,
      status: 400,
      code: 'bad_request',
    },
    {
      name: 'an Expect other than 100-continue',
      request: `POST /api/car_driver HTTP/1.1\r\n${HOST}Expect: 200-ok\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`,
      status: 417,
      code: 'expectation_failed',
    },
    { name: 'no Host header', request: 'GET /health HTTP/1.1\r\n\r\n', status: 400, code: 'bad_request' },
    {
      name: 'a gzip body',
      request: gzipRequest('/api/car_driver', 'application/json'),
      status: 415,
      code: 'unsupported_media_type',
    },
    {
      name: 'static: ../ out of the root',
      request: `GET /docs/static/../../package.json HTTP/1.1\r\n${HOST}\r\n`,
      status: 404,
      code: 'not_found',
    },
    { name: 'static: %00', request: `GET /docs/static/%00 HTTP/1.1\r\n${HOST}\r\n`, status: 404, code: 'not_found' },
    {
      name: 'static: ./',
      request: `GET /docs/static/./index.html HTTP/1.1\r\n${HOST}\r\n`,
      status: 404,
      code: 'not_found',
    },
    {
      name: '/pay/: a token over the length limit',
      request: `GET /pay/${'a'.repeat(200)} HTTP/1.1\r\n${HOST}\r\n`,
      status: 414,
      html: true,
    },
    { name: '/pay/: a bad percent-encoding', request: `GET /pay/%ff HTTP/1.1\r\n${HOST}\r\n`, status: 400, html: true },
    {
      name: '/pay/: a NUL in a header',
      request: `GET /pay/abc HTTP/1.1\r\n${HOST}X-Probe: a\0b\r\n\r\n`,
      status: 400,
      html: true,
    },
    {
      name: '/pay/: huge headers',
      request: `GET /pay/abc HTTP/1.1\r\n${HOST}X-Probe: ${'a'.repeat(20_000)}\r\n\r\n`,
      status: 431,
      html: true,
    },
    {
      name: '/pay/: an Expect',
      request: `POST /pay/abc HTTP/1.1\r\n${HOST}Expect: 200-ok\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 2\r\n\r\na=`,
      status: 417,
      html: true,
    },
    { name: '/pay/: no Host header', request: 'GET /pay/abc HTTP/1.1\r\n\r\n', status: 400, html: true },
    {
      name: '/pay/: a gzip form',
      request: gzipRequest('/pay/abc', 'application/x-www-form-urlencoded'),
      status: 415,
      html: true,
    },
  ];

function checkBody(t: ExecutionContext, response: RawResponse, expected: (typeof CASES)[number]): void {
  t.is(response.status, expected.status, response.raw.slice(0, 300));
  if (expected.html) {
    t.is(response.headers['content-type'], 'text/html; charset=utf-8');
    t.regex(response.body, /^<!doctype html>/);
    return;
  }
  t.is(response.headers['content-type'], 'application/json; charset=utf-8');
  if (expected.code === undefined) throw new Error('a JSON case names its code');
  const body = JSON.parse(response.body) as { error: string; message: string; details: unknown[] };
  t.is(body.error, expected.code);
  const registered: number = API_ERRORS[expected.code].status;
  t.is(registered, expected.status, 'the registry has the code with this status');
  t.is(typeof body.message, 'string');
  t.deepEqual(body.details, []);
}

for (const testCase of CASES) {
  test(`raw socket, ${testCase.name}: ${testCase.status} with the ${testCase.html ? 'payment page' : 'error body'}`, async (t) => {
    const app = await testApp(t);
    const address = await app.app.listen({ host: '127.0.0.1', port: 0 });
    checkBody(t, await rawRequest(address, testCase.request), testCase);
  });
}

test('a gzip body on the OAuth token endpoint: 415 with the RFC 6749 body', async (t) => {
  const app = await testApp(t);
  const address = await app.app.listen({ host: '127.0.0.1', port: 0 });
  const response = await rawRequest(address, gzipRequest('/api/oauth/token', 'application/json'));
  t.is(response.status, 415);
  t.is((JSON.parse(response.body) as { error: string }).error, 'unsupported_media_type');
});

test('Content-Encoding: identity is a plain body', async (t) => {
  const app = await testApp(t);
  const response = await app.app.inject({
    method: 'POST',
    url: '/api/car_driver',
    headers: { 'content-encoding': 'identity', 'content-type': 'application/json' },
    payload: '{}',
  });
  t.is(response.json<{ error: string }>().error, 'invalid_client', 'the body was read: the client is checked');
});
