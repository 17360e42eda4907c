// The embedded MQTT broker (aedes, MQTT 3.1.1): one `parkbench api` gives a
// working bench. Every client logs in (boxes with the account from
// `admin box add`, gateways and operators with `admin mqtt-client add`), every
// publish and subscribe is checked against the access rules, and a box
// response is handed to ingestion BEFORE the publisher's PUBACK, so an
// acknowledged response is a committed box log (docs/architecture.md, Delivery guarantees).
import { once } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import { Aedes, type AuthenticateError, type Client, type PublishPacket } from 'aedes';
import { silentLogger, type Logger } from '../../lib/logger.js';
import type { Topics } from '../../lib/mqtt-topics.js';
import { MqttAcl, type MqttAccount } from './acl.js';
import type { MqttAccountRepository } from './accounts.js';
import { ClientIdOwners } from './client-id-owners.js';
import { guardReads, type PacketSizeScanner } from './packet-size-guard.js';
import { indexedRetainedPersistence } from './retained-index.js';
import { messageOf } from '../../lib/message-of.js';

/** Turns a box response into a box log; resolves once it is committed (or
 * refused for good). Never rejects: a response that cannot become a log is
 * counted and logged by the ingester, and still acknowledged. */
export type ResponseIngester = (moduleId: number, payload: Buffer, publisher: MqttAccount) => Promise<void>;

export interface EmbeddedBrokerOptions {
  readonly host: string;
  readonly port: number;
  readonly topics: Topics;
  readonly accounts: MqttAccountRepository;
  readonly logger?: Logger;
  readonly ingest?: ResponseIngester;
  /** Largest packet a logged-in client may send, bytes (MQTT_MAX_PACKET_BYTES). */
  readonly maxPacketBytes?: number;
}

/** MQTT_MAX_PACKET_BYTES's default: a box response or state is under 1 KiB,
 * a gateway's state about 40 bytes a box it reaches. */
export const DEFAULT_MAX_PACKET_BYTES = 64 * 1024;

/** The largest CONNECT, whatever MQTT_MAX_PACKET_BYTES says. A parkbench
 * CONNECT (client id, username, password, an availability will) is about
 * 200 bytes; 4 KiB leaves room for long ids and prefixes, and no packet of
 * a client that has not logged in yet is larger (the limit holds until its
 * login succeeds). */
export const MAX_CONNECT_BYTES = 4 * 1024;

export interface BrokerCounters {
  refusedLogins: number;
  refusedPublishes: number;
  refusedSubscriptions: number;
  /** Connections closed for a packet over the size limit. */
  refusedPackets: number;
}

export interface EmbeddedBroker {
  readonly aedes: Aedes;
  readonly port: number;
  readonly url: string;
  readonly counters: BrokerCounters;
  /** Publishes as the broker itself (the API's own messages). */
  publish(topic: string, payload: string, options?: { retain?: boolean }): Promise<void>;
  close(): Promise<void>;
}

export class BrokerPortError extends Error {
  override readonly name = 'BrokerPortError';
}

export async function startEmbeddedBroker(options: EmbeddedBrokerOptions): Promise<EmbeddedBroker> {
  const logger = (options.logger ?? silentLogger).child({ component: 'api:broker' });
  const acl = new MqttAcl(options.topics);
  const accountOf = new WeakMap<Client, MqttAccount>();
  const scannerOf = new WeakMap<Client, PacketSizeScanner>();
  const counters: BrokerCounters = {
    refusedLogins: 0,
    refusedPublishes: 0,
    refusedSubscriptions: 0,
    refusedPackets: 0,
  };
  const maxPacketBytes = options.maxPacketBytes ?? DEFAULT_MAX_PACKET_BYTES;
  const packetLimits = { connectBytes: Math.min(MAX_CONNECT_BYTES, maxPacketBytes), packetBytes: maxPacketBytes };
  const owners = new ClientIdOwners();

  const aedes = await Aedes.createBroker({
    id: 'parkbench-api',
    persistence: indexedRetainedPersistence() as never,
    authenticate: (client, username, password, done) => {
      const refuse = (code: 2 | 4 | 5, reason: string): void => {
        counters.refusedLogins++;
        logger.warn({ client_id: client.id, username: username ?? null, reason }, 'MQTT login refused');
        const error = new Error(reason) as AuthenticateError;
        // aedes types the code as AuthErrorCode, an ambient const enum that
        // isolated modules cannot read; 2, 4 and 5 are its values (CONNACK codes).
        // eslint-disable-next-line @typescript-eslint/no-unsafe-enum-assignment -- see above
        error.returnCode = code;
        done(error, false);
      };
      if (username === undefined || password === undefined) {
        refuse(4, 'no username or password');
        return;
      }
      options.accounts.authenticate(username, password.toString('utf8')).then(
        (account) => {
          if (account === null) {
            refuse(4, 'unknown username or wrong password');
            return;
          }
          // aedes drops the login of a connection closed meanwhile: claim nothing for it.
          if (client.closed || client.conn.destroyed) {
            done(null, false);
            return;
          }
          // Checked after the password, so only an account learns that an id is taken.
          if (!owners.claim(client.id, account.username, client.clean)) {
            refuse(2, 'client id belongs to another account');
            return;
          }
          accountOf.set(client, account);
          scannerOf.get(client)?.loggedIn();
          done(null, true);
        },
        (error: unknown) => refuse(5, `login could not be checked: ${messageOf(error)}`),
      );
    },
    authorizePublish: (client, packet, callback) => {
      // The broker's own publishes (client null) and $SYS are not clients' to judge.
      if (client === null) {
        callback(null);
        return;
      }
      const account = accountOf.get(client);
      if (account === undefined || !acl.canPublish(account, packet.topic)) {
        counters.refusedPublishes++;
        logger.warn({ username: account?.username ?? null, topic: packet.topic }, 'MQTT publish refused');
        callback(new Error(`not allowed to publish on ${packet.topic}`));
        return;
      }
      const box = options.topics.parseBoxTopic(packet.topic);
      if (box?.name !== 'response' || options.ingest === undefined) {
        callback(null);
        return;
      }
      // Committed before the PUBACK: aedes acknowledges after this callback.
      void options.ingest(box.moduleId, packet.payload as Buffer, account).then(() => callback(null));
    },
    authorizeSubscribe: (client, subscription, callback) => {
      const account = accountOf.get(client);
      if (account === undefined || !acl.canSubscribe(account, subscription.topic)) {
        counters.refusedSubscriptions++;
        logger.warn({ username: account?.username ?? null, topic: subscription.topic }, 'MQTT subscription refused');
        // A null subscription is refused in the SUBACK (0x80), the connection stays.
        callback(null, null);
        return;
      }
      callback(null, subscription);
    },
  });

  // Registered: a clean=true connection has had any stored session dropped.
  aedes.on('client', (client: Client) => {
    const account = accountOf.get(client);
    if (client.clean && account !== undefined) owners.sessionCleared(client.id, account.username);
  });

  const sockets = new Set<Socket>();
  // noDelay: MQTT packets are small; Nagle would hold each for a delayed ACK.
  const server: Server = createServer({ noDelay: true }, (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    // A refusal comes with data, later than `client` is set.
    const scanner = guardReads(socket, packetLimits, (refusal) => {
      counters.refusedPackets++;
      logger.warn(
        {
          client_id: client.id,
          username: accountOf.get(client)?.username ?? null,
          address: socket.remoteAddress ?? null,
          declared_bytes: refusal.declaredBytes,
          limit_bytes: refusal.limitBytes,
          before_login: refusal.beforeLogin,
        },
        'MQTT packet refused: over the size limit, connection closed',
      );
    });
    const client = aedes.handle(socket);
    scannerOf.set(client, scanner);
    // After `destroyed` is set: a login finishing later claims nothing (above).
    socket.once('close', () => {
      const account = accountOf.get(client);
      if (account !== undefined) owners.left(client.id, account.username);
    });
  });
  try {
    server.listen(options.port, options.host);
    await Promise.race([
      once(server, 'listening'),
      once(server, 'error').then(([error]) => Promise.reject(error as Error)),
    ]);
  } catch (error) {
    await new Promise<void>((resolve) => aedes.close(() => resolve()));
    const code = (error as NodeJS.ErrnoException).code;
    throw new BrokerPortError(
      code === 'EADDRINUSE'
        ? `MQTT port ${options.port} on ${options.host} is already in use (set MQTT_PORT, or MQTT_URL for an external broker)`
        : `cannot listen for MQTT on ${options.host}:${options.port}: ${messageOf(error)}`,
      { cause: error },
    );
  }
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  logger.info({ port }, 'MQTT broker listening');

  return {
    aedes,
    port,
    url: `mqtt://${host}:${port}`,
    counters,
    publish: (topic, payload, publishOptions = {}) =>
      new Promise<void>((resolve, reject) => {
        const packet = {
          cmd: 'publish',
          topic,
          payload: Buffer.from(payload),
          qos: 1,
          retain: publishOptions.retain ?? false,
          dup: false,
        } as PublishPacket;
        aedes.publish(packet, (error) => (error ? reject(error) : resolve()));
      }),
    close: async () => {
      server.close();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => aedes.close(() => resolve()));
      if (server.listening) await once(server, 'close');
    },
  };
}
