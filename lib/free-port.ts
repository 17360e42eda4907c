// Free TCP ports, for processes that must know their port up front: the API
// given PORT 0 (links derived from HOST and PORT, PUBLIC_URL and pay_url, name
// the port the server really listens on), and benchmarks and tests that build
// a PUBLIC_URL from it or restart a process on the same one.
import { createServer } from 'node:net';

/** A port free on `host` now (the system's pick for port 0). */
export function freePortOn(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/** A port free on loopback. */
export function freePort(): Promise<number> {
  return freePortOn('127.0.0.1');
}

/** True when nothing listens on the port any more. */
export function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}
