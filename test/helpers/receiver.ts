// A real local HTTP server standing in for a parking's third party: it
// records every POST (headers, raw body, when on the given clock) and
// answers as the test says.
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ExecutionContext } from 'ava';
import type { Clock } from '../../lib/clock.js';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  /** When it arrived, ms, on the receiver's clock (the test's, else the system's). */
  receivedAt: number;
}

export type Answer = (response: ServerResponse, index: number) => void;

export const ok: Answer = (response) => response.writeHead(200).end('ok');
export const fail: Answer = (response) => response.writeHead(500).end('down');
/** Never answers (the connection stays open until the server closes). */
export const hang: Answer = () => undefined;
export const redirect: Answer = (response) => response.writeHead(301, { location: '/elsewhere' }).end();
/** Standard Webhooks: the receiver wants no more deliveries. */
export const gone: Answer = (response) => response.writeHead(410).end('gone');
/** 429 asking for `seconds` of quiet. */
export const tooMany =
  (seconds: number): Answer =>
  (response) =>
    response.writeHead(429, { 'retry-after': String(seconds) }).end();
/** 503 with a Retry-After HTTP-date. */
export const unavailableUntil =
  (at: Date): Answer =>
  (response) =>
    response.writeHead(503, { 'retry-after': at.toUTCString() }).end();

export interface Receiver {
  url: string;
  received: Received[];
  /** How to answer the next requests; the last one repeats. */
  answers: Answer[];
  /** Resolves when `count` requests have arrived. */
  waitFor(count: number): Promise<void>;
}

export async function startReceiver(t: ExecutionContext, answers: Answer[] = [ok], clock?: Clock): Promise<Receiver> {
  const received: Received[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const receiver: Receiver = {
    url: '',
    received,
    answers,
    waitFor: (count) =>
      new Promise((resolve) => {
        if (received.length >= count) resolve();
        else waiters.push({ count, resolve });
      }),
  };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const index = received.length;
      received.push({
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        receivedAt: clock?.now() ?? Date.now(),
      });
      const answer = receiver.answers[Math.min(index, receiver.answers.length - 1)] ?? ok;
      answer(response, index);
      for (const waiter of waiters.filter((w) => received.length >= w.count)) waiter.resolve();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  t.teardown(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return receiver;
}
