// PORT 0 means "any free port". The command picks one before building the
// app, so links derived from HOST and PORT (PUBLIC_URL, pay_url) name the
// port the server really listens on, not port 0.
import { createServer } from 'node:net';

export function freePortOn(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}
