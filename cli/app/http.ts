// The app stand-in's HTTP calls: JSON in and out with Node's fetch, and an
// error that says which call failed and what the API answered.
import { messageOf } from '../../lib/message-of.js';

export class StepFailure extends Error {
  override readonly name = 'StepFailure';
}

export interface JsonResponse<T> {
  status: number;
  body: T;
  text: string;
}

export class ApiClient {
  constructor(readonly baseUrl: string) {}

  async request<T>(
    method: 'GET' | 'POST' | 'PUT',
    path: string,
    options: { token?: string; json?: unknown; form?: Record<string, string> } = {},
  ): Promise<JsonResponse<T>> {
    const headers: Record<string, string> = {};
    let body: string | undefined;
    if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
    if (options.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.json);
    } else if (options.form !== undefined) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(options.form).toString();
    }
    const url = path.startsWith('http') ? path : `${this.baseUrl}${path}`;
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers,
        ...(body === undefined ? {} : { body }),
        signal: AbortSignal.timeout(15_000),
      });
    } catch (error) {
      throw new StepFailure(`${method} ${url} did not answer: ${messageOf(error)}`);
    }
    const text = await response.text();
    let parsed: unknown = text;
    if ((response.headers.get('content-type') ?? '').includes('json')) {
      try {
        parsed = JSON.parse(text);
      } catch {
        throw new StepFailure(`${method} ${path}: ${response.status} with a body that is not JSON`);
      }
    }
    return { status: response.status, body: parsed as T, text };
  }

  /** Like request, but anything but `expected` is a failure naming the answer. */
  async expect<T>(
    expected: number,
    method: 'GET' | 'POST' | 'PUT',
    path: string,
    options: { token?: string; json?: unknown; form?: Record<string, string> } = {},
  ): Promise<T> {
    const response = await this.request<T>(method, path, options);
    if (response.status !== expected)
      throw new StepFailure(
        `${method} ${path}: expected ${expected}, got ${response.status} ${summarize(response.text)}`,
      );
    return response.body;
  }
}

function summarize(text: string): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length > 300 ? `${oneLine.slice(0, 300)}…` : oneLine;
}
