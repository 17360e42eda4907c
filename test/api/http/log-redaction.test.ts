// No secret sent in a URL's query reaches the logs: the real server's pino
// stream is read line by line while real requests (over a socket) carry
// `?access_token=`, `?ticket=`, `?token=`, `?refresh_token=`,
// `?client_secret=` and `?password=` in any case, a malformed request
// carries one in bytes node keeps for the error log, and a forwarding URL
// carries a receiver's token.
import { Writable } from 'node:stream';
import test, { type ExecutionContext } from 'ava';
import { testApp } from '../../helpers/api-app.js';
import { logs, forwardingSetup, send } from '../../helpers/forwarding.js';
import { rawRequest } from '../../helpers/raw-http.js';
import { startReceiver } from '../../helpers/receiver.js';

interface LogLine {
  msg?: string;
  req?: { url?: string };
  err?: Record<string, unknown>;
  url?: unknown;
}

/** A pino stream whose lines the test reads. */
function logSink(t: ExecutionContext): { stream: Writable; text: () => string; lines: () => LogLine[] } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  t.teardown(() => stream.destroy());
  return {
    stream,
    text: () => text,
    lines: () =>
      text
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as LogLine),
  };
}

async function listening(app: Awaited<ReturnType<typeof testApp>>): Promise<string> {
  await app.app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.app.server.address();
  return `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
}

test('the request log prints every secret query parameter as [redacted], whatever its case or escaping; the request is still refused', async (t) => {
  const sink = logSink(t);
  const app = await testApp(t, {}, { logger: { level: 'info', stream: sink.stream } });
  const base = await listening(app);
  const cases: [string, string][] = [
    ['access_token', 'SECRET-access-1'],
    ['ACCESS_TOKEN', 'SECRET-access-2'],
    ['%61ccess_token', 'SECRET-access-3'],
    ['ticket', 'SECRET-ticket-4'],
    ['Token', 'SECRET-token-5'],
    ['refresh_token', 'SECRET-refresh-6'],
    ['client_secret', 'SECRET-client-7'],
    ['PassWord', 'SECRET-password-8'],
  ];
  for (const [name, secret] of cases) {
    const response = await fetch(`${base}/api/car_driver/me?keep=1&${name}=${secret}&other=2`);
    t.is(response.status, 401, name);
  }
  const unknown = await fetch(`${base}/no/such/route?token=SECRET-404-9`);
  t.is(unknown.status, 404);
  const urls = sink
    .lines()
    .filter((line) => line.msg === 'incoming request')
    .map((line) => line.req?.url);
  for (const [name] of cases) t.true(urls.includes(`/api/car_driver/me?keep=1&${name}=[redacted]&other=2`), name);
  t.true(urls.includes('/no/such/route?token=[redacted]'));
  t.true(sink.text().includes('request completed'), 'the logger did capture requests');
  t.notRegex(sink.text(), /SECRET-/, 'no secret reached the logs');
});

test('the error log: node keeps only the redacted request line of a request it cannot parse, and secrets in messages are redacted', async (t) => {
  const sink = logSink(t);
  const app = await testApp(t, {}, { logger: { level: 'debug', stream: sink.stream } });
  const base = await listening(app);
  const answer = await rawRequest(
    base,
    'GET /api/car_driver/me?access_token=SECRET-raw-1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer SECRET-header-2\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n',
  );
  t.is(answer.status, 400);
  const clientError = sink.lines().find((line) => line.msg?.startsWith('client error') === true);
  t.like(clientError?.err, {
    code: 'HPE_UNEXPECTED_CONTENT_LENGTH',
    rawPacket: 'GET /api/car_driver/me?access_token=[redacted] HTTP/1.1',
  });

  app.app.log.error(
    { err: new Error('GET https://example.test/cb?x=1&client_secret=SECRET-message-3 failed') },
    'boom',
  );
  const logged = sink.lines().find((line) => line.msg === 'boom');
  t.is(logged?.err?.message, 'GET https://example.test/cb?x=1&client_secret=[redacted] failed');
  t.regex(String(logged?.err?.stack), /client_secret=\[redacted\] failed/);
  t.notRegex(sink.text(), /SECRET-/, 'no secret reached the logs');
});

test("the forwarding worker's log prints a receiver's token in its URL as [redacted]; the delivery goes to the real URL", async (t) => {
  const sink = logSink(t);
  const receiver = await startReceiver(t);
  const s = await forwardingSetup(t, `${receiver.url}?token=SECRET-hook-1`, {
    logger: { level: 'info', stream: sink.stream },
  });
  await send(s, logs(s, 1));
  await s.app.ctx.forwarding.runOnce();
  t.is(receiver.received.length, 1);
  const forwarded = sink.lines().find((line) => line.msg === 'box logs forwarded');
  t.is(forwarded?.url, `${receiver.url}?token=[redacted]`);
  t.notRegex(sink.text(), /SECRET-/, 'no secret reached the logs');
});
