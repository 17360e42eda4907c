// A bare aedes broker in its own process, for benchmarks: prints
// "listening <port>" and runs until killed. It keeps retained messages with
// the same exact-topic index as the API's embedded broker
// (api/mqtt/retained-index.ts), without logins.
import { createServer } from 'node:net';
import { Aedes } from 'aedes';
import { indexedRetainedPersistence } from '../../api/mqtt/retained-index.js';

const broker = await Aedes.createBroker({ persistence: indexedRetainedPersistence() as never });
// noDelay: MQTT packets are small; Nagle would hold each for a delayed ACK.
const server = createServer({ noDelay: true }, broker.handle);
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`listening ${typeof address === 'object' && address !== null ? address.port : 0}\n`);
});
