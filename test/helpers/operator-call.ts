// One operator API call on a running API (a `parkbench start` of
// bench-process.ts): the status and the JSON body, for tests that make runs
// and reservations through the API a page then shows.
export interface OperatorAnswer<T> {
  status: number;
  body: T;
}

export interface OperatorCall {
  method?: 'GET' | 'POST' | 'DELETE';
  body?: unknown;
  /** The operator's bearer token (a bench's `token` unless another operator calls). */
  token: string;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

export async function operatorCall<T>(apiUrl: string, path: string, call: OperatorCall): Promise<OperatorAnswer<T>> {
  const headers: Record<string, string> = { authorization: `Bearer ${call.token}`, ...call.headers };
  if (call.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${apiUrl}/api/operator${path}`, {
    method: call.method ?? (call.body === undefined ? 'GET' : 'POST'),
    headers,
    ...(call.body === undefined ? {} : { body: JSON.stringify(call.body) }),
    ...(call.signal === undefined ? {} : { signal: call.signal }),
  });
  const text = await response.text();
  return { status: response.status, body: (text === '' ? null : JSON.parse(text)) as T };
}

/** The same call, failing with the API's answer unless its status is `expected`. */
export async function operatorOk<T>(apiUrl: string, path: string, call: OperatorCall, expected = 200): Promise<T> {
  const answer = await operatorCall<T>(apiUrl, path, call);
  if (answer.status !== expected)
    throw new Error(`${call.method ?? 'call'} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body;
}
