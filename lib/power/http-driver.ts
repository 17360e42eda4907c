// `driver: http`: a smart plug on the bench network, switched over its HTTP
// API, every answer checked:
// - Shelly Gen2 RPC (shelly-api-docs, Switch.Set): `GET
//   /rpc/Switch.Set?id=<switch>&on=true|false` answers 200 with
//   `{"was_on": <bool>}`; an error is a non-200 status with `{"code": <n>,
//   "message": "..."}`.
// - Tasmota (tasmota.github.io, Commands over HTTP): `GET
//   /cm?cmnd=Power%20On` answers `{"POWER":"ON"}`; relay N of a multi-relay
//   device is `PowerN` (answer `POWERN`), `Power` alone being the first.
//   Switch 0 sends `Power`, switch N > 0 sends `PowerN`. An unknown command
//   answers `{"Command":"Unknown"}`.
// A plug with a web password (`password_env` in the bench file): Shelly
// Gen2 asks for HTTP Digest authentication (RFC 7616, SHA-256, user
// `admin`), answered in digest-auth.ts; Tasmota takes `user=admin&password=`
// in the query. The password never appears in an error.
// A plug that does not answer within `timeoutMs` (of the injected clock) is
// a PowerError, as is any other answer.
import type { Clock } from '../clock.js';
import { offThenOn } from './command-driver.js';
import { digestAuthorization, parseDigestChallenge } from './digest-auth.js';
import { PowerError, type PowerDriver } from './power-driver.js';

export type PlugApi = 'shelly' | 'tasmota';

export interface HttpPowerOptions {
  /** The plug's base URL (http or https), checked at load. */
  readonly url: string;
  readonly api: PlugApi;
  /** Shelly: the switch id (0 first); Tasmota: 0 for `Power`, N for `PowerN`. */
  readonly switch: number;
  readonly timeoutMs: number;
  readonly settleMs: number;
  readonly offMs: number;
  readonly clock: Clock;
  /** The plug's web password (its user is `admin` on both APIs); none when it has none. */
  readonly password?: string;
}

/** The user of a plug's web password: both APIs have this one only. */
const PLUG_USER = 'admin';

export class HttpPowerDriver implements PowerDriver {
  readonly description: string;
  readonly settleMs: number;

  constructor(private readonly options: HttpPowerOptions) {
    this.description = `http ${options.api} ${options.url} switch ${options.switch}`;
    this.settleMs = options.settleMs;
  }

  on(): Promise<void> {
    return this.#set(true);
  }

  off(): Promise<void> {
    return this.#set(false);
  }

  cycle(): Promise<void> {
    return offThenOn(this, this.options.clock, this.options.offMs);
  }

  async #set(on: boolean): Promise<void> {
    const shown = requestUrl(this.options, on);
    const answer = await this.#request(shown);
    const problem =
      this.options.api === 'shelly'
        ? shellyProblem(answer.status, answer.body)
        : tasmotaProblem(answer.status, answer.body, this.options.switch, on);
    if (problem !== null) throw new PowerError(`GET ${shown}: ${problem}`);
  }

  /** The request, with the password where the plug takes it: Tasmota's
   * query, or Shelly's answer to a digest challenge. */
  async #request(shown: string): Promise<{ status: number; body: string }> {
    const { password, api } = this.options;
    if (password === undefined) {
      const answer = await this.#get(shown, shown);
      if (answer.status === 401)
        throw new PowerError(
          `GET ${shown}: HTTP 401: the plug asks for its web password; name the environment variable holding it with password_env`,
        );
      return answer;
    }
    if (api === 'tasmota')
      return this.#get(`${shown}&user=${PLUG_USER}&password=${encodeURIComponent(password)}`, shown);
    const first = await this.#get(shown, shown);
    if (first.status !== 401) return first;
    const challenge = parseDigestChallenge(first.headers.get('www-authenticate'));
    if (challenge === undefined)
      throw new PowerError(
        `GET ${shown}: HTTP 401 without a Digest challenge this driver answers (SHA-256 or MD5, qop auth): ${String(first.headers.get('www-authenticate'))}`,
      );
    const target = new URL(shown);
    const authorization = digestAuthorization(challenge, {
      method: 'GET',
      uri: `${target.pathname}${target.search}`,
      username: PLUG_USER,
      password,
    });
    const answer = await this.#get(shown, shown, { authorization });
    if (answer.status === 401) throw new PowerError(`GET ${shown}: HTTP 401: the plug refused the password`);
    return answer;
  }

  async #get(
    url: string,
    shown: string,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; body: string; headers: Headers }> {
    const { clock, timeoutMs } = this.options;
    const abort = new AbortController();
    const timer = clock.setTimeout(() => {
      abort.abort();
    }, timeoutMs);
    try {
      const response = await fetch(url, { signal: abort.signal, redirect: 'error', headers });
      return { status: response.status, body: await response.text(), headers: response.headers };
    } catch (error) {
      if (abort.signal.aborted) throw new PowerError(`GET ${shown}: no answer within ${timeoutMs} ms (timeout_ms)`);
      throw new PowerError(`GET ${shown}: ${causeOf(error)}`);
    } finally {
      clock.clearTimeout(timer);
    }
  }
}

/** The request that sets the switch. */
export function requestUrl(options: Pick<HttpPowerOptions, 'url' | 'api' | 'switch'>, on: boolean): string {
  const base = options.url.replace(/\/+$/, '');
  if (options.api === 'shelly') return `${base}/rpc/Switch.Set?id=${options.switch}&on=${on ? 'true' : 'false'}`;
  return `${base}/cm?cmnd=${tasmotaPower(options.switch)}%20${on ? 'On' : 'Off'}`;
}

function tasmotaPower(index: number): string {
  return index === 0 ? 'Power' : `Power${index}`;
}

function shellyProblem(status: number, body: string): string | null {
  const answer = json(body);
  if (status === 200 && isRecord(answer) && typeof answer.was_on === 'boolean') return null;
  if (isRecord(answer) && typeof answer.message === 'string')
    return `HTTP ${status}, error ${String(answer.code)}: ${answer.message}`;
  return `HTTP ${status}, not a Switch.Set answer: ${oneLine(body)}`;
}

function tasmotaProblem(status: number, body: string, index: number, on: boolean): string | null {
  const answer = json(body);
  const key = index === 0 ? 'POWER' : `POWER${index}`;
  const want = on ? 'ON' : 'OFF';
  if (status === 200 && isRecord(answer)) {
    // Tasmota names the first relay POWER or POWER1 depending on how many it has.
    const got = answer[key] ?? (index <= 1 ? (answer.POWER ?? answer.POWER1) : undefined);
    if (got === want) return null;
    if (typeof got === 'string') return `the plug says ${key} ${got}, expected ${want}`;
  }
  return `HTTP ${status}, not a ${key} answer: ${oneLine(body)}`;
}

function json(body: string): unknown {
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat === '' ? '(empty)' : flat.length > 200 ? `${flat.slice(0, 200)}…` : flat;
}

/** fetch's "fetch failed" hides the reason (ECONNREFUSED, ...) in its cause. */
function causeOf(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause;
    if (cause instanceof Error) return cause.message;
    return error.message;
  }
  return String(error);
}
