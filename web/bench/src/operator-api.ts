// Calls to /api/operator/... with the operator's bearer token. Every failure
// becomes an `ApiCallError` with the registry's message (or a network
// error's), and a 401 also tells the page to show the login form again.
import type { ApiErrorBody } from './types';

export class ApiCallError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
  ) {
    super(message);
  }
}

export interface OperatorApi {
  get<T>(path: string): Promise<T>;
  post<T>(path: string, body?: unknown): Promise<T>;
}

function isErrorBody(value: unknown): value is ApiErrorBody {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Record<string, unknown>)['error'] === 'string' &&
    typeof (value as Record<string, unknown>)['message'] === 'string'
  );
}

/** `onUnauthorized` runs on a 401 from any call, with the error's message. */
export function operatorApi(token: string, onUnauthorized: (message: string) => void): OperatorApi {
  async function call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'application/json' };
    const init: RequestInit = { method, headers, cache: 'no-store' };
    if (method === 'POST') {
      headers['content-type'] = 'application/json';
      init.body = JSON.stringify(body ?? {});
    }
    let response: Response;
    try {
      response = await fetch(`/api/operator${path}`, init);
    } catch {
      throw new ApiCallError('The API cannot be reached.', 0, 'network');
    }
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text === '' ? null : JSON.parse(text);
    } catch {
      parsed = null; // Not JSON (a proxy's page): the status alone is shown.
    }
    if (!response.ok) {
      const error = isErrorBody(parsed)
        ? new ApiCallError(parsed.message, response.status, parsed.error)
        : new ApiCallError(`HTTP ${response.status}`, response.status, 'http');
      if (response.status === 401) onUnauthorized(error.message);
      throw error;
    }
    return parsed as T;
  }
  return {
    get: (path) => call('GET', path),
    post: (path, body) => call('POST', path, body),
  };
}
