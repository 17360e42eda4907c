// A request whose body never comes is answered or closed within the configured
// timeouts, and the server keeps answering others meanwhile.
import test from 'ava';
import type { Socket } from 'node:net';
import { testApp } from '../../helpers/api-app.js';
import { openSocket, parseResponse } from '../../helpers/raw-http.js';

const HALF_A_BODY =
  'POST /api/car_driver HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"api_car_driver_fo_user":';

/** Resolves when the server closes the socket: ms since `since`, and what it wrote. */
function closed(socket: Socket, since: number): Promise<{ afterMs: number; written: string }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve({ afterMs: Date.now() - since, written: Buffer.concat(chunks).toString() }));
  });
}

test('a body that stops halfway: the silent connection is closed after HTTP_CONNECTION_TIMEOUT_MS', async (t) => {
  const app = await testApp(t, {
    httpConnectionTimeoutMs: 300,
    httpRequestTimeoutMs: 5_000,
    httpHeadersTimeoutMs: 2_000,
  });
  const address = await app.app.listen({ host: '127.0.0.1', port: 0 });
  const socket = await openSocket(address);
  t.teardown(() => socket.destroy());
  const start = Date.now();
  const end = closed(socket, start);
  socket.write(HALF_A_BODY);
  const { afterMs } = await end;
  t.true(afterMs >= 250 && afterMs < 2_000, `closed after ${afterMs} ms`);
});

test('a body that trickles in: 408 request_timeout after HTTP_REQUEST_TIMEOUT_MS, while /health keeps answering', async (t) => {
  const app = await testApp(t, {
    httpConnectionTimeoutMs: 5_000,
    httpRequestTimeoutMs: 600,
    httpHeadersTimeoutMs: 400,
  });
  const address = await app.app.listen({ host: '127.0.0.1', port: 0 });
  const sockets = await Promise.all(Array.from({ length: 50 }, () => openSocket(address)));
  t.teardown(() => sockets.forEach((socket) => socket.destroy()));
  const start = Date.now();
  const ends = sockets.map((socket) => closed(socket, start));
  for (const socket of sockets) socket.write(HALF_A_BODY);
  // A byte every 100 ms: never silent long enough for the connection timeout.
  const drip = setInterval(() => sockets.forEach((socket) => socket.writable && socket.write(' ')), 100);
  t.teardown(() => clearInterval(drip));
  const health = await fetch(`${address}/health`);
  t.is(health.status, 200, '/health answers while 50 bodies stall');
  const results = await Promise.all(ends);
  clearInterval(drip);
  for (const { afterMs, written } of results) {
    t.true(afterMs >= 550 && afterMs < 3_000, `closed after ${afterMs} ms`);
    const response = parseResponse(written);
    t.is(response.status, 408);
    t.is((JSON.parse(response.body) as { error: string }).error, 'request_timeout');
  }
  t.is((await fetch(`${address}/health`)).status, 200);
});
