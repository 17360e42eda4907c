// What the reservation tests share: the three routes as an operator sends
// them (through inject), and the same over a real socket for the requests
// that wait (fetch against the app listening on an ephemeral port).
import type { LightMyRequestResponse } from 'fastify';
import type { TestApp } from '../../helpers/api-app.js';

export interface ReservationBody {
  token: string;
  module_id: number;
  holder: string;
  note: string | null;
  since: string;
  expires_at: string;
  ttl_seconds: number;
  queue: { holder: string; note: string | null; since: string }[];
}

const headersOf = (operatorToken: string, reservation?: string): Record<string, string> => ({
  authorization: `Bearer ${operatorToken}`,
  ...(reservation === undefined ? {} : { 'parkbench-reservation': reservation }),
});

export function reserve(
  app: TestApp,
  operatorToken: string,
  moduleId: number | string,
  payload: unknown,
  reservation?: string,
): Promise<LightMyRequestResponse> {
  return app.app.inject({
    method: 'POST',
    url: `/api/operator/boxes/${moduleId}/reservation`,
    headers: headersOf(operatorToken, reservation),
    payload: payload as string,
  });
}

export function release(
  app: TestApp,
  operatorToken: string,
  moduleId: number | string,
  reservation?: string,
): Promise<LightMyRequestResponse> {
  return app.app.inject({
    method: 'DELETE',
    url: `/api/operator/boxes/${moduleId}/reservation`,
    headers: headersOf(operatorToken, reservation),
  });
}

export function reservationOf(
  app: TestApp,
  operatorToken: string,
  moduleId: number | string,
): Promise<LightMyRequestResponse> {
  return app.app.inject({
    method: 'GET',
    url: `/api/operator/boxes/${moduleId}/reservation`,
    headers: headersOf(operatorToken),
  });
}

/** The app listening on an ephemeral port of 127.0.0.1: its base URL. */
export async function listening(app: TestApp): Promise<string> {
  const address = await app.app.listen({ host: '127.0.0.1', port: 0 });
  return address;
}

/** A POST over a real socket, for a request that waits; `signal` aborts it (the client gone). */
export async function reserveOverHttp(
  base: string,
  operatorToken: string,
  moduleId: number,
  payload: unknown,
  signal?: AbortSignal,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${base}/api/operator/boxes/${moduleId}/reservation`, {
    method: 'POST',
    headers: { ...headersOf(operatorToken), 'content-type': 'application/json' },
    body: JSON.stringify(payload),
    ...(signal === undefined ? {} : { signal }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}
