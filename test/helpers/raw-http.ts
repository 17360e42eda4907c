// Raw HTTP over node:net, for requests an HTTP client library refuses to send
// (two Content-Lengths, a NUL in a header, no Host, a stalled body): what the
// server writes back, parsed just enough to check status, headers and body.
import { connect, type Socket } from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Everything the server wrote, as received. */
  raw: string;
}

/** Host and port of an address such as http://127.0.0.1:3456. */
export function hostPort(address: string): { host: string; port: number } {
  const url = new URL(address);
  return { host: url.hostname, port: Number(url.port) };
}

/** A connected socket; destroyed at teardown by whoever holds it. */
export function openSocket(address: string): Promise<Socket> {
  const { host, port } = hostPort(address);
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port }, () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Parses the first response in what a server wrote (Content-Length framed or up to close). */
export function parseResponse(raw: string): RawResponse {
  const end = raw.indexOf('\r\n\r\n');
  const head = end === -1 ? raw : raw.slice(0, end);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const status = Number(statusLine.split(' ')[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = end === -1 ? '' : raw.slice(end + 4);
  const length = headers['content-length'];
  if (length !== undefined) body = Buffer.from(body).subarray(0, Number(length)).toString();
  return { status, headers, body, raw };
}

/**
 * Writes `request` (bytes as given) and collects what comes back until the
 * server closes the connection or `idleMs` pass with nothing more.
 */
export async function rawRequest(address: string, request: string | Buffer, idleMs = 500): Promise<RawResponse> {
  const socket = await openSocket(address);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const finish = (): void => {
      socket.destroy();
      resolve(parseResponse(Buffer.concat(chunks).toString('latin1')));
    };
    let timer = setTimeout(finish, idleMs);
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      clearTimeout(timer);
      timer = setTimeout(finish, idleMs);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      finish();
    });
    socket.on('error', () => undefined);
    socket.write(request);
  });
}
