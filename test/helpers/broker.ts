// A real aedes broker on an ephemeral loopback port, for tests.
import { createServer, type Server, type Socket } from 'node:net';
import { Aedes, type AedesOptions } from 'aedes';
import type { ExecutionContext } from 'ava';

export interface TestBroker {
  readonly broker: Aedes;
  readonly port: number;
  readonly url: string;
  /** Closes the listener and every client connection (a broker outage). */
  close(): Promise<void>;
}

export async function startBroker(options: AedesOptions = {}, port = 0): Promise<TestBroker> {
  const broker = await Aedes.createBroker(options);
  const sockets = new Set<Socket>();
  const server: Server = createServer({ noDelay: true }, (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    broker.handle(socket);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('broker did not get a TCP port');
  let closed = false;
  return {
    broker,
    port: address.port,
    url: `mqtt://127.0.0.1:${address.port}`,
    close: async () => {
      if (closed) return;
      closed = true;
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await new Promise<void>((resolve) => broker.close(() => resolve()));
    },
  };
}

/** A broker closed when the test ends. */
export async function brokerForTest(t: ExecutionContext, options: AedesOptions = {}): Promise<TestBroker> {
  const broker = await startBroker(options);
  t.teardown(() => broker.close());
  return broker;
}
