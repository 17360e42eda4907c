// The operator API of a running service, as the command line calls it:
// JSON over HTTP with the operator's token (and a reservation's token when
// one is given), every call bounded in time. It is node:http rather than the
// global fetch: fetch gives up on any answer that takes more than 300 s to
// start (its headers timeout), and `reserve --wait 10m` is one request
// answered when the box is free. An error body of the API ({error,
// message, details}) becomes a ServiceRefused whose message is the line to
// print; no answer at all is a ServiceUnreachable. The token never appears
// in either.
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { messageOf } from '../../lib/message-of.js';
import type { ServiceSettings } from './flags.js';

/** How long an ordinary call may take, ms. */
export const CALL_TIMEOUT_MS = 15_000;
/** The most of an answer read, bytes: a run view with its results fits many times. */
const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

/** The service answered with an error: `message` is the one line to print. */
export class ServiceRefused extends Error {
  override readonly name = 'ServiceRefused';
  constructor(
    message: string,
    readonly status: number,
    /** The API's error code (`box_reserved`, `resource_not_found`, ...), or undefined for a body that is none. */
    readonly code: string | undefined,
    readonly body: Readonly<Record<string, unknown>>,
  ) {
    super(message);
  }
}

/** No answer: the service is down, the address is wrong, or it took too long. */
export class ServiceUnreachable extends Error {
  override readonly name = 'ServiceUnreachable';
}

export interface CallOptions {
  readonly timeoutMs?: number;
  /** Ends the call early (Ctrl-C): the call rejects with the signal's reason. */
  readonly signal?: AbortSignal;
  /** Send the reservation's token, if any (default true). */
  readonly reservation?: boolean;
}

export class OperatorClient {
  constructor(readonly settings: ServiceSettings) {}

  /** The answer's JSON body (undefined for a 204); a ServiceRefused for a 4xx or 5xx. */
  async call<T>(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    body?: unknown,
    options: CallOptions = {},
  ): Promise<T> {
    const url = new URL(`${this.settings.url}${path}`);
    const timeoutMs = options.timeoutMs ?? CALL_TIMEOUT_MS;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = options.signal === undefined ? timeout : AbortSignal.any([timeout, options.signal]);
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string> = {
      accept: 'application/json',
      authorization: `Bearer ${this.settings.operatorToken}`,
      ...(payload === undefined
        ? {}
        : { 'content-type': 'application/json', 'content-length': String(payload.length) }),
      ...(options.reservation !== false && this.settings.reservation !== undefined
        ? { 'parkbench-reservation': this.settings.reservation }
        : {}),
    };
    let answer: { status: number; text: string };
    try {
      answer = await exchange(url, method, headers, payload, signal);
    } catch (error) {
      if (options.signal?.aborted === true) throw options.signal.reason;
      if (timeout.aborted)
        throw new ServiceUnreachable(`no answer from ${url.origin} within ${Math.round(timeoutMs / 1000)} s`);
      throw new ServiceUnreachable(`cannot reach ${url.origin}: ${messageOf(error)}`);
    }
    const parsed = parseJson(answer.text);
    if (answer.status >= 200 && answer.status < 300) return parsed as T;
    throw refusal(answer.status, parsed, `${method} ${url.pathname}`);
  }
}

function exchange(
  url: URL,
  method: string,
  headers: Record<string, string>,
  payload: Buffer | undefined,
  signal: AbortSignal,
): Promise<{ status: number; text: string }> {
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    // A connection per call (agent: false): calls are few and far apart (a soak's results
    // come hours after its start), and a kept-alive socket the service has just closed
    // would fail the next call.
    const outgoing = send(url, { method, headers, signal, agent: false }, (response: IncomingMessage) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_ANSWER_BYTES) {
          response.destroy(new Error(`an answer of more than ${MAX_ANSWER_BYTES} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      response.on('error', reject);
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
      );
    });
    outgoing.on('error', reject);
    outgoing.end(payload);
  });
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** The API's error body as one line: the details (they name the field and
 * why), else the message; anything else (a proxy's page) by its status. */
function refusal(status: number, body: unknown, what: string): ServiceRefused {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return new ServiceRefused(`${what} answered HTTP ${status}`, status, undefined, {});
  const fields = body as Record<string, unknown>;
  const code = typeof fields.error === 'string' ? fields.error : undefined;
  const details = Array.isArray(fields.details)
    ? fields.details
        .map((detail: unknown) => {
          if (typeof detail !== 'object' || detail === null) return undefined;
          const { path, message } = detail as { path?: unknown; message?: unknown };
          if (typeof message !== 'string') return undefined;
          return typeof path === 'string' && path !== '' && !message.startsWith(path) ? `${path}: ${message}` : message;
        })
        .filter((line): line is string => line !== undefined)
    : [];
  const message =
    details.length > 0
      ? details.join('; ')
      : typeof fields.message === 'string'
        ? fields.message
        : `${what} answered HTTP ${status}`;
  return new ServiceRefused(message, status, code, fields);
}

/** The line for a 409 box_reserved: who holds the box, why and until when. */
export function reservedLine(moduleId: number, refused: ServiceRefused): string {
  const { holder, note, expires_at: expiresAt } = refused.body;
  if (typeof holder !== 'string') return refused.message;
  const why = typeof note === 'string' && note !== '' ? ` (${note})` : '';
  const until = typeof expiresAt === 'string' ? ` until ${expiresAt}` : '';
  return `box ${moduleId} is reserved by ${holder}${why}${until}`;
}
