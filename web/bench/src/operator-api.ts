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
  /** A file the API sends as an attachment: its bytes, and the name its
   * Content-Disposition gives (else `fallback`). */
  file(path: string, fallback: string): Promise<{ blob: Blob; name: string }>;
}

function isErrorBody(value: unknown): value is ApiErrorBody {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Record<string, unknown>)['error'] === 'string' &&
    typeof (value as Record<string, unknown>)['message'] === 'string'
  );
}

function parseJson(text: string): unknown {
  try {
    return text === '' ? null : JSON.parse(text);
  } catch {
    return null; // Not JSON (a proxy's page): the status alone is shown.
  }
}

/** The file name of `attachment; filename="..."`, when it is a plain one. */
function attachmentName(disposition: string | null): string | undefined {
  return /filename="([\w.-]+)"/.exec(disposition ?? '')?.[1];
}

/** `onUnauthorized` runs on a 401 from any call, with the error's message. */
export function operatorApi(token: string, onUnauthorized: (message: string) => void): OperatorApi {
  /** The response of a call that succeeded; else throws its ApiCallError. */
  async function send(method: 'GET' | 'POST', path: string, accept: string, body?: unknown): Promise<Response> {
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept };
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
    if (response.ok) return response;
    const parsed = parseJson(await response.text());
    const error = isErrorBody(parsed)
      ? new ApiCallError(parsed.message, response.status, parsed.error)
      : new ApiCallError(`HTTP ${response.status}`, response.status, 'http');
    if (response.status === 401) onUnauthorized(error.message);
    throw error;
  }
  async function call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const response = await send(method, path, 'application/json', body);
    return parseJson(await response.text()) as T;
  }
  return {
    get: (path) => call('GET', path),
    post: (path, body) => call('POST', path, body),
    file: async (path, fallback) => {
      const response = await send('GET', path, '*/*');
      return {
        blob: await response.blob(),
        name: attachmentName(response.headers.get('content-disposition')) ?? fallback,
      };
    },
  };
}
