// The http driver against a real HTTP server in the test that answers as a
// Shelly Gen2 plug (RPC Switch.Set) and a Tasmota one (/cm?cmnd=Power...)
// do: the request each call makes, the answer checked, an error answer and
// a plug that never answers (the timeout stepped on a FakeClock).
import test, { type ExecutionContext } from 'ava';
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { systemClock } from '../../lib/clock.js';
import { FakeClock } from '../../lib/fake-clock.js';
import { HttpPowerDriver, requestUrl, type HttpPowerOptions } from '../../lib/power/http-driver.js';
import { PowerError } from '../../lib/power/power-driver.js';
import { waitFor } from '../helpers/wait.js';

interface Plug {
  readonly url: string;
  /** Every request's path and query, in order. */
  readonly requests: string[];
  /** Relays' states as the plug holds them. */
  readonly on: Map<number, boolean>;
  /** Answers nothing from now on (a plug that hangs). */
  hang: boolean;
  /** Every request's Authorization header, in order ('' for none). */
  readonly authorizations: string[];
}

const SHELLY_REALM = 'shellyplus1pm-a8032ab12345';
const SHELLY_NONCE = '60dc59c6';

/** Whether a Shelly request's Digest answer is right for the password,
 * computed here as RFC 7616 says (not by the driver's code). */
function shellyAccepts(header: string, password: string, path: string): boolean {
  const fields = new Map([...header.matchAll(/(\w+)=(?:"([^"]*)"|([^\s,]+))/g)].map((m) => [m[1], m[2] ?? m[3] ?? '']));
  const sha = (text: string): string => createHash('sha256').update(text).digest('hex');
  const ha1 = sha(`admin:${SHELLY_REALM}:${password}`);
  const ha2 = sha(`GET:${path}`);
  const want = sha(`${ha1}:${SHELLY_NONCE}:${fields.get('nc') ?? ''}:${fields.get('cnonce') ?? ''}:auth:${ha2}`);
  return (
    header.startsWith('Digest ') &&
    fields.get('username') === 'admin' &&
    fields.get('uri') === path &&
    fields.get('response') === want
  );
}

/** Shelly Gen2: `/rpc/Switch.Set?id=N&on=true|false` answers `{"was_on":...}`,
 * an unknown id 500 `{"code":-105,"message":"Argument 'id', value N not found!"}`.
 * Tasmota: `/cm?cmnd=Power[N] On|Off` answers `{"POWER[N]":"ON|OFF"}`, an
 * unknown relay `{"Command":"Unknown"}`. Each has 2 relays. */
async function plug(t: ExecutionContext, api: 'shelly' | 'tasmota', password?: string): Promise<Plug> {
  const state: Plug = {
    authorizations: [],
    url: '',
    requests: [],
    on: new Map([
      [0, true],
      [1, true],
      [2, true],
    ]),
    hang: false,
  };
  const answer = (response: ServerResponse, status: number, body: unknown): void => {
    response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? '/', 'http://plug');
    state.requests.push(`${url.pathname}${url.search}`);
    state.authorizations.push(request.headers.authorization ?? '');
    if (state.hang) return;
    if (password !== undefined && api === 'shelly') {
      const authorization = request.headers.authorization ?? '';
      if (!shellyAccepts(authorization, password, request.url ?? '')) {
        response
          .writeHead(401, {
            'www-authenticate': `Digest qop="auth", realm="${SHELLY_REALM}", nonce="${SHELLY_NONCE}", algorithm=SHA-256`,
          })
          .end();
        return;
      }
    }
    if (password !== undefined && api === 'tasmota') {
      if (url.searchParams.get('user') !== 'admin' || url.searchParams.get('password') !== password) {
        answer(response, 200, { WARNING: 'Need user=<username>&password=<password>' });
        return;
      }
    }
    if (api === 'shelly' && url.pathname === '/rpc/Switch.Set') {
      const id = Number(url.searchParams.get('id'));
      if (id > 1) {
        answer(response, 500, { code: -105, message: `Argument 'id', value ${id} not found!` });
        return;
      }
      const was = state.on.get(id) ?? false;
      state.on.set(id, url.searchParams.get('on') === 'true');
      answer(response, 200, { was_on: was });
      return;
    }
    if (api === 'tasmota' && url.pathname === '/cm') {
      const match = /^Power(\d*) (On|Off)$/i.exec(url.searchParams.get('cmnd') ?? '');
      const index = match?.[1] === '' ? 1 : Number(match?.[1]);
      if (match === null || index > 2) {
        answer(response, 200, { Command: 'Unknown' });
        return;
      }
      state.on.set(index, match[2]?.toLowerCase() === 'on');
      answer(response, 200, { [`POWER${match[1] ?? ''}`]: match[2]?.toUpperCase() });
      return;
    }
    answer(response, 404, { code: 404, message: 'No handler' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return Object.assign(state, { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
}

function driver(options: Partial<HttpPowerOptions> & Pick<HttpPowerOptions, 'url' | 'api'>): HttpPowerDriver {
  return new HttpPowerDriver({ switch: 0, timeoutMs: 5_000, settleMs: 0, offMs: 10, clock: systemClock, ...options });
}

test('the requests: Shelly Switch.Set by id; Tasmota Power, PowerN for switch N > 0', (t) => {
  const base = { url: 'http://10.0.0.50/' };
  t.is(requestUrl({ ...base, api: 'shelly', switch: 0 }, false), 'http://10.0.0.50/rpc/Switch.Set?id=0&on=false');
  t.is(requestUrl({ ...base, api: 'shelly', switch: 1 }, true), 'http://10.0.0.50/rpc/Switch.Set?id=1&on=true');
  t.is(requestUrl({ ...base, api: 'tasmota', switch: 0 }, false), 'http://10.0.0.50/cm?cmnd=Power%20Off');
  t.is(requestUrl({ ...base, api: 'tasmota', switch: 2 }, true), 'http://10.0.0.50/cm?cmnd=Power2%20On');
});

test('Shelly Gen2: off, on and cycle switch the relay, each answer checked', async (t) => {
  const shelly = await plug(t, 'shelly');
  const power = driver({ url: shelly.url, api: 'shelly', switch: 1 });
  t.is(power.description, `http shelly ${shelly.url} switch 1`);
  await power.off();
  t.false(shelly.on.get(1));
  await power.on();
  t.true(shelly.on.get(1));
  await power.cycle();
  t.deepEqual(shelly.requests, [
    '/rpc/Switch.Set?id=1&on=false',
    '/rpc/Switch.Set?id=1&on=true',
    '/rpc/Switch.Set?id=1&on=false',
    '/rpc/Switch.Set?id=1&on=true',
  ]);
});

test("Shelly Gen2: an error answer is a PowerError with the plug's code and message", async (t) => {
  const shelly = await plug(t, 'shelly');
  await t.throwsAsync(driver({ url: shelly.url, api: 'shelly', switch: 5 }).off(), {
    instanceOf: PowerError,
    message: `GET ${shelly.url}/rpc/Switch.Set?id=5&on=false: HTTP 500, error -105: Argument 'id', value 5 not found!`,
  });
  // A Tasmota answer where a Shelly one was expected (the wrong api in the bench file).
  const tasmota = await plug(t, 'tasmota');
  await t.throwsAsync(driver({ url: tasmota.url, api: 'shelly' }).on(), {
    message: /: HTTP 404, error 404: No handler$/,
  });
});

test('Tasmota: Power for switch 0, PowerN for switch N, the POWER answer checked', async (t) => {
  const tasmota = await plug(t, 'tasmota');
  await driver({ url: tasmota.url, api: 'tasmota' }).off();
  t.false(tasmota.on.get(1));
  await driver({ url: tasmota.url, api: 'tasmota', switch: 2 }).off();
  t.false(tasmota.on.get(2));
  await driver({ url: tasmota.url, api: 'tasmota', switch: 2 }).on();
  t.true(tasmota.on.get(2));
  t.deepEqual(tasmota.requests, ['/cm?cmnd=Power%20Off', '/cm?cmnd=Power2%20Off', '/cm?cmnd=Power2%20On']);
  await t.throwsAsync(driver({ url: tasmota.url, api: 'tasmota', switch: 3 }).on(), {
    instanceOf: PowerError,
    message: `GET ${tasmota.url}/cm?cmnd=Power3%20On: HTTP 200, not a POWER3 answer: {"Command":"Unknown"}`,
  });
});

test('a plug that never answers: a PowerError once timeout_ms has passed on the clock', async (t) => {
  const shelly = await plug(t, 'shelly');
  shelly.hang = true;
  const clock = new FakeClock();
  const off = driver({ url: shelly.url, api: 'shelly', clock, timeoutMs: 3_000 }).off();
  await waitFor(() => shelly.requests.length === 1 && clock.pendingTimers === 1, 'the request to be sent');
  clock.advance(2_999);
  clock.advance(1);
  await t.throwsAsync(off, {
    instanceOf: PowerError,
    message: `GET ${shelly.url}/rpc/Switch.Set?id=0&on=false: no answer within 3000 ms (timeout_ms)`,
  });
});

test('a plug that is not there: a PowerError with the reason', async (t) => {
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
  await t.throwsAsync(driver({ url: `http://127.0.0.1:${port}`, api: 'tasmota' }).on(), {
    instanceOf: PowerError,
    message: `GET http://127.0.0.1:${port}/cm?cmnd=Power%20On: connect ECONNREFUSED 127.0.0.1:${port}`,
  });
});

test('Shelly Gen2 with a password: the digest challenge answered; a wrong password or none is one clear error', async (t) => {
  const shelly = await plug(t, 'shelly', 'bench secret');
  await driver({ url: shelly.url, api: 'shelly', password: 'bench secret' }).off();
  t.false(shelly.on.get(0));
  t.deepEqual(shelly.requests, ['/rpc/Switch.Set?id=0&on=false', '/rpc/Switch.Set?id=0&on=false']);
  t.is(shelly.authorizations[0], '');
  t.regex(shelly.authorizations[1] ?? '', /^Digest username="admin", realm="shellyplus1pm-a8032ab12345", /);
  await t.throwsAsync(driver({ url: shelly.url, api: 'shelly', password: 'guess' }).on(), {
    instanceOf: PowerError,
    message: `GET ${shelly.url}/rpc/Switch.Set?id=0&on=true: HTTP 401: the plug refused the password`,
  });
  await t.throwsAsync(driver({ url: shelly.url, api: 'shelly' }).on(), {
    instanceOf: PowerError,
    message:
      /HTTP 401: the plug asks for its web password; name the environment variable holding it with password_env$/,
  });
  t.true(shelly.on.get(0) === false, 'refused requests switched nothing');
});

test('Tasmota with a password: user and password in the query, never in an error', async (t) => {
  const tasmota = await plug(t, 'tasmota', 'joker');
  await driver({ url: tasmota.url, api: 'tasmota', password: 'joker' }).off();
  t.false(tasmota.on.get(1));
  t.deepEqual(tasmota.requests, ['/cm?cmnd=Power%20Off&user=admin&password=joker']);
  const error = await t.throwsAsync(driver({ url: tasmota.url, api: 'tasmota', password: 'wrong' }).on(), {
    instanceOf: PowerError,
  });
  t.is(
    error.message,
    `GET ${tasmota.url}/cm?cmnd=Power%20On: HTTP 200, not a POWER answer: {"WARNING":"Need user=<username>&password=<password>"}`,
  );
  t.notRegex(error.message, /wrong/);
});
