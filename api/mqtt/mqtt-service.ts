// The API's side of MQTT: either the embedded broker (responses ingested
// inside its publish authorization, before the PUBACK) or a client of an
// external broker (subscribed to every box's response topic, as a shared
// subscription where the broker has them, acknowledging each message only
// after its box log is committed). Either way it can also send a command to a
// box and wait for the answer (POST /api/car_driver/smart_keys/:id/open).
import { randomUUID } from 'node:crypto';
import type { Clock } from '../../lib/clock.js';
import { silentLogger, type Logger } from '../../lib/logger.js';
import type { CommandContext, CommandMessage } from '../../lib/mqtt-messages.js';
import type { Topics } from '../../lib/mqtt-topics.js';
import { ResilientMqttClient } from '../../lib/resilient-mqtt.js';
import type { ApiConfig } from '../config.js';
import type { Db } from '../db/open.js';
import { MqttAccountRepository } from './accounts.js';
import { startEmbeddedBroker, type EmbeddedBroker } from './broker.js';
import { ResponseIngestion, type IngestedResponse } from './response-ingester.js';

export type MqttConnection =
  | { readonly mode: 'embedded'; readonly host: string; readonly port: number }
  | { readonly mode: 'external'; readonly url: string; readonly username?: string; readonly password?: string; readonly sharedGroup?: string };

/** What ingestion needs (declared by response-ingester.ts), the MQTT
 * accounts' database, and the packet size bound. */
export type MqttServiceDeps = ConstructorParameters<typeof ResponseIngestion>[0] & {
  db: Db;
  config: Pick<ApiConfig, 'mqttMaxPacketBytes'>;
};

export interface MqttServiceOptions {
  readonly ctx: MqttServiceDeps;
  readonly topics: Topics;
  readonly clock: Clock;
  readonly connection: MqttConnection;
  readonly logger?: Logger;
}

export type CommandOutcome = { readonly answered: IngestedResponse } | { readonly error: 'timeout' | 'broker_unavailable' };

/** A box's availability message (retained; its last will says offline). */
export type AvailabilityListener = (moduleId: number, online: boolean) => void;

export class MqttService {
  readonly #availabilityListeners = new Set<AvailabilityListener>();

  private constructor(
    readonly ingestion: ResponseIngestion,
    readonly url: string,
    private readonly options: MqttServiceOptions,
    private readonly broker: EmbeddedBroker | undefined,
    private readonly client: ResilientMqttClient | undefined,
  ) {}

  static async start(options: MqttServiceOptions): Promise<MqttService> {
    const logger = options.logger ?? silentLogger;
    const ingestion = new ResponseIngestion(options.ctx, logger);
    const { connection, topics } = options;
    if (connection.mode === 'embedded') {
      // Each message a unit of the group commit (api/db/group-commit.ts):
      // those of one turn share a transaction, each acknowledged only after
      // its commit (response-ingester.ts).
      const broker = await startEmbeddedBroker({
        host: connection.host,
        port: connection.port,
        topics,
        accounts: new MqttAccountRepository(options.ctx.db),
        maxPacketBytes: options.ctx.config.mqttMaxPacketBytes,
        logger,
        ingest: (moduleId, payload) => ingestion.ingest(moduleId, payload),
      });
      const service = new MqttService(ingestion, broker.url, options, broker, undefined);
      // Every publish passes here, retained availability and last wills included.
      broker.aedes.on('publish', (packet) => service.#availabilityMessage(packet.topic, packet.payload));
      return service;
    }
    const responses = topics.allBoxes('response');
    const client = new ResilientMqttClient({
      url: connection.url,
      ...(connection.username === undefined ? {} : { username: connection.username }),
      ...(connection.password === undefined ? {} : { password: connection.password }),
      clientId: `parkbench-api-${process.pid}-${randomUUID().slice(0, 8)}`,
      clock: options.clock,
      logger: logger.child({ component: 'api:mqtt' }),
      // MQTT 5: MQTT.js calls customHandleAcks (the PUBACK after the commit)
      // only for protocol version 5; on 3.1.1 it acknowledges at once and
      // beforeAck never runs, so nothing would be ingested.
      protocolVersion: 5,
      // Several API processes split the responses between them (MQTT 5 shared
      // subscriptions; mosquitto offers them to 3.1.1 clients too).
      // Availability unshared: every API process needs all of it, retained messages included.
      subscriptions: [connection.sharedGroup === undefined || connection.sharedGroup === '' ? responses : `$share/${connection.sharedGroup}/${responses}`, topics.allBoxes('availability')],
      beforeAck: async (topic, payload) => {
        const box = topics.parseBoxTopic(topic);
        if (box === null) ingestion.refuseTopic(topic);
        else if (box.name === 'response') await ingestion.ingest(box.moduleId, payload);
      },
    });
    const service = new MqttService(ingestion, connection.url, options, undefined, client);
    client.on('message', (topic: string, payload: Buffer) => service.#availabilityMessage(topic, payload));
    await client.start();
    return service;
  }

  /** Called with every box availability message (online or offline). */
  onAvailability(listener: AvailabilityListener): () => void {
    this.#availabilityListeners.add(listener);
    return () => this.#availabilityListeners.delete(listener);
  }

  #availabilityMessage(topic: string, payload: Buffer | string): void {
    const box = this.options.topics.parseBoxTopic(topic);
    if (box?.name !== 'availability') return;
    const text = payload.toString();
    if (text !== 'online' && text !== 'offline') return;
    for (const listener of this.#availabilityListeners) listener(box.moduleId, text === 'online');
  }

  /** Counters of the embedded broker (refused logins, publishes, subscriptions, packets), if it runs. */
  get brokerCounters(): EmbeddedBroker['counters'] | undefined {
    return this.broker?.counters;
  }

  /** Publishes a command to a box and waits for its response message (matched
   * by a fresh request_id) or the timeout. */
  sendCommand(moduleId: number, command: Buffer, context: Omit<CommandContext, 'request_id'>, timeoutMs: number): Promise<CommandOutcome> {
    const requestId = randomUUID();
    const message: CommandMessage = { command: command.toString('base64'), context: { ...context, request_id: requestId } };
    const { clock, topics } = this.options;
    return new Promise((resolve) => {
      let settled = false;
      const finish = (outcome: CommandOutcome): void => {
        if (settled) return;
        settled = true;
        stopListening();
        clock.clearTimeout(timer);
        resolve(outcome);
      };
      const stopListening = this.ingestion.onResponse((response) => {
        if (response.moduleId === moduleId && response.context.request_id === requestId) finish({ answered: response });
      });
      const timer = clock.setTimeout(() => finish({ error: 'timeout' }), timeoutMs);
      const topic = topics.box(moduleId, 'command');
      const payload = JSON.stringify(message);
      if (this.broker !== undefined) {
        this.broker.publish(topic, payload).catch(() => finish({ error: 'broker_unavailable' }));
      } else {
        this.client?.publish(topic, payload, { queue: false });
      }
    });
  }

  async close(): Promise<void> {
    // What is waiting is stored before the database closes.
    this.ingestion.flush();
    await this.broker?.close();
    await this.client?.stop();
  }
}
