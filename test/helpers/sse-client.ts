// A real Server-Sent Events reader for tests (app.inject cannot stream): a
// GET over a real socket, the text/event-stream parsed into messages
// (id, event, data as JSON), kept in order; `next` waits for one that
// matches. Closed by the test's teardown.
import { request, type IncomingMessage } from 'node:http';
import type { ExecutionContext } from 'ava';
import { waitFor } from './wait.js';

export interface SseMessage {
  id: string | undefined;
  event: string;
  data: unknown;
}

export interface SseClient {
  readonly status: number;
  readonly headers: IncomingMessage['headers'];
  readonly messages: SseMessage[];
  /** Waits for a message after the first `from` ones that `match`es; returns it. */
  next(match: (message: SseMessage) => boolean, what: string, from?: number): Promise<SseMessage>;
  /** True once the server ended the response (every message before the end is in `messages`). */
  readonly ended: boolean;
  /** Waits for the server to end the response. */
  end(what: string): Promise<void>;
  close(): void;
}

/** Opens `url` (path and query) on `base` with `headers`; resolves once the response head arrived. */
export function openSse(
  t: ExecutionContext,
  base: string,
  url: string,
  headers: Record<string, string> = {},
): Promise<SseClient> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(url, base), { headers: { accept: 'text/event-stream', ...headers } }, (response) => {
      const messages: SseMessage[] = [];
      let buffer = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        buffer += chunk;
        for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const message = parseBlock(block);
          if (message !== undefined) messages.push(message);
        }
      });
      response.on('error', () => undefined);
      let ended = false;
      response.on('end', () => {
        ended = true;
      });
      const client: SseClient = {
        status: response.statusCode ?? 0,
        headers: response.headers,
        messages,
        async next(match, what, from = 0) {
          let found: SseMessage | undefined;
          await waitFor(() => {
            found = messages.slice(from).find(match);
            return found !== undefined;
          }, what);
          return found as SseMessage;
        },
        get ended() {
          return ended;
        },
        end: (what) => waitFor(() => ended, what),
        close: () => req.destroy(),
      };
      t.teardown(() => client.close());
      resolve(client);
    });
    req.on('error', reject);
    req.end();
  });
}

function parseBlock(block: string): SseMessage | undefined {
  let id: string | undefined;
  let event = 'message';
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) continue; // a comment: the heartbeat
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'id') id = value;
    else if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  }
  if (data.length === 0) return undefined;
  const text = data.join('\n');
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: kept as text
  }
  return { id, event, data: parsed };
}
