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
import { ResilientMqttClient, type PublishOutcome } from '../../lib/resilient-mqtt.js';
import type { ApiConfig } from '../config/index.js';
import type { Store } from '../db/store.js';
import {
  BoxAvailability,
  BoxAvailabilityStore,
  type BoxCommandSender,
  boxesOfGatewayState,
  type DerivedAvailability,
} from '../boxes/index.js';
import { MqttAccountRepository } from './accounts.js';
import type { LiveBoxStates } from '../events/live-states.js';
import { messageOf } from '../../lib/message-of.js';
import { startEmbeddedBroker, type EmbeddedBroker } from './broker.js';
import { ResponseIngestion, type IngestedResponse } from './response-ingester.js';
import { type CaptureRing, MqttCapture } from '../capture/index.js';

export type MqttConnection =
  | { readonly mode: 'embedded'; readonly host: string; readonly port: number }
  | {
      readonly mode: 'external';
      readonly url: string;
      readonly username?: string;
      readonly password?: string;
      readonly sharedGroup?: string;
      /** This process's client id; unset: a fresh one, and a clean session. */
      readonly clientId?: string;
      /** Keep the broker's session this long while away (seconds; with a
       * client id a restarted process reuses): the responses routed to
       * this process and not acknowledged wait for it instead of being lost
       * with its session. Unset or 0: a clean session. */
      readonly sessionExpirySeconds?: number;
    };

/** What ingestion needs (declared by response-ingester.ts; its `events`
 * also hear of availability and state changes), the store (the MQTT
 * accounts), the packet size bound, and where the boxes' published states go. */
export type MqttServiceDeps = ConstructorParameters<typeof ResponseIngestion>[0] & {
  /** The MQTT accounts' logins (accounts.ts). */
  store: Store;
  config: Pick<ApiConfig, 'mqttMaxPacketBytes'>;
  liveStates: Pick<LiveBoxStates, 'message'>;
};

export interface MqttServiceOptions {
  readonly ctx: MqttServiceDeps;
  readonly topics: Topics;
  readonly clock: Clock;
  readonly connection: MqttConnection;
  readonly logger?: Logger;
  /** Where each command message published and each response message
   * received is recorded, per box (CAPTURE_RING_SECONDS); absent: nowhere. */
  readonly capture?: CaptureRing;
}

/** A command's outcome (api/boxes/commands.ts, CommandOutcome) with all the ingestion knows of the answer. */
export type IngestedOutcome =
  { readonly answered: IngestedResponse } | { readonly error: 'timeout' | 'broker_unavailable' };

/** A box's true availability (box-availability.ts): online or offline, from
 * its own availability message and its gateway's; with the reason. */
export type AvailabilityListener = (moduleId: number, online: boolean, derived: DerivedAvailability) => void;

export class MqttService implements BoxCommandSender {
  readonly #availabilityListeners = new Set<AvailabilityListener>();
  readonly #availability: BoxAvailability;
  readonly #availabilityStore: BoxAvailabilityStore;
  /** The availability writes, one after another in the order of the changes
   * (a box's online then offline must land in that order on a pool too). */
  #availabilityWrites: Promise<void> = Promise.resolve();
  /** Records the boxes' traffic in the capture ring, when there is one. */
  #capture: MqttCapture | undefined;

  private constructor(
    readonly ingestion: ResponseIngestion,
    readonly url: string,
    private readonly options: MqttServiceOptions,
    private readonly broker: EmbeddedBroker | undefined,
    private readonly client: ResilientMqttClient | undefined,
    /** The responses' subscription, when the broker keeps this process's session (left at close). */
    private readonly keptResponses?: string,
  ) {
    this.#availabilityStore = new BoxAvailabilityStore(options.ctx.store);
    // An embedded broker starts with no retained message: what an earlier run stored is not known now.
    if (broker !== undefined) this.#writeAvailability(undefined, () => this.#availabilityStore.clear());
    this.#availability = new BoxAvailability(options.clock, (moduleId, derived) => this.#derived(moduleId, derived));
  }

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
        accounts: new MqttAccountRepository(options.ctx.store),
        maxPacketBytes: options.ctx.config.mqttMaxPacketBytes,
        logger,
        ingest: (moduleId, payload) => ingestion.ingest(moduleId, payload),
      });
      const service = new MqttService(ingestion, broker.url, options, broker, undefined);
      service.#startCapture();
      // Every publish passes here, retained availability, states and last wills included.
      broker.aedes.on('publish', (packet) => service.#statusMessage(packet.topic, packet.payload));
      return service;
    }
    const responses = topics.allBoxes('response');
    const responsesSubscription =
      connection.sharedGroup === undefined || connection.sharedGroup === ''
        ? responses
        : `$share/${connection.sharedGroup}/${responses}`;
    const keptSession = connection.clientId !== undefined && (connection.sessionExpirySeconds ?? 0) > 0;
    const client = new ResilientMqttClient({
      url: connection.url,
      ...(connection.username === undefined ? {} : { username: connection.username }),
      ...(connection.password === undefined ? {} : { password: connection.password }),
      clientId: connection.clientId ?? `parkbench-api-${process.pid}-${randomUUID().slice(0, 8)}`,
      // A broker delivers a shared subscription's messages to one member
      // each, and queues them for that member's session: with a clean
      // session, what was routed to a process killed before its commit and
      // PUBACK went with it (mosquitto 2.0 does not hand it to another
      // member). A kept session gets it back to the restarted process.
      ...(keptSession ? { sessionExpirySeconds: connection.sessionExpirySeconds } : {}),
      clock: options.clock,
      logger: logger.child({ component: 'api:mqtt' }),
      // MQTT 5: the broker is told how many responses may wait for their
      // commit unacknowledged (Receive Maximum, lib/ack-pipeline.ts); on
      // 3.1.1 its own window would bound them (mosquitto: 20).
      protocolVersion: 5,
      // Several API processes split the responses between them (MQTT 5 shared
      // subscriptions; mosquitto offers them to 3.1.1 clients too).
      // Availability unshared: every API process needs all of it, retained messages included.
      // So are the gateways' availability and state (which boxes each reaches).
      subscriptions: [
        responsesSubscription,
        topics.allBoxes('availability'),
        // The boxes' retained state (barrier, battery, faults): `live` in the operator API.
        topics.allBoxes('state'),
        topics.allGateways('availability'),
        topics.allGateways('state'),
      ],
      beforeAck: async (topic, payload) => {
        const box = topics.parseBoxTopic(topic);
        // A gateway's availability and state are read by #statusMessage; any other topic is refused.
        if (box === null) {
          if (topics.parseGatewayTopic(topic) === null) ingestion.refuseTopic(topic);
        } else if (box.name === 'response') await ingestion.ingest(box.moduleId, payload);
      },
    });
    const service = new MqttService(
      ingestion,
      connection.url,
      options,
      undefined,
      client,
      keptSession ? responsesSubscription : undefined,
    );
    service.#startCapture();
    client.on('message', (topic: string, payload: Buffer) => service.#statusMessage(topic, payload));
    await client.start();
    return service;
  }

  /** Records every command sent and response received from now on; the
   * interface is named after the broker, known once it listens or is
   * connected to, before any message arrives. */
  #startCapture(): void {
    const ring = this.options.capture;
    if (ring === undefined) return;
    const capture = new MqttCapture(ring, this.url);
    this.#capture = capture;
    const { topics } = this.options;
    this.ingestion.onArrival((moduleId, payload, message) =>
      capture.response(moduleId, topics.box(moduleId, 'response'), payload, message),
    );
  }

  /** Called when a box's true availability changes, and with every
   * availability message of the box itself (online or offline). */
  onAvailability(listener: AvailabilityListener): () => void {
    this.#availabilityListeners.add(listener);
    return () => this.#availabilityListeners.delete(listener);
  }

  /** A box's true availability as this process derives it now. */
  availabilityOf(moduleId: number): DerivedAvailability {
    return this.#availability.of(moduleId);
  }

  #statusMessage(topic: string, payload: Buffer | string): void {
    const { topics } = this.options;
    const box = topics.parseBoxTopic(topic);
    if (box?.name === 'availability') {
      const online = onlineOf(payload);
      if (online !== undefined) this.#availability.box(box.moduleId, online);
      return;
    }
    if (box?.name === 'state') {
      // Parsed strictly; a bad payload is counted (ctx.liveStates.counters), never thrown.
      const { ctx } = this.options;
      if (ctx.liveStates.message(box.moduleId, payload)) ctx.events.publishBox(box.moduleId);
      return;
    }
    const gateway = topics.parseGatewayTopic(topic);
    if (gateway?.name === 'availability') {
      const online = onlineOf(payload);
      if (online === undefined) return;
      const lost = this.#availability.gateway(gateway.gatewayId, online);
      // The embedded broker does what the gateway's clean stop does (gateway.ts
      // stop): its boxes' retained availability says offline, so every
      // subscriber (and the retained index, retained-index.ts) has the true
      // value, not the stale online. An external broker's ACL gives the API
      // no such write: there only the derived value says it.
      for (const moduleId of lost) this.#publishOffline(moduleId);
    } else if (gateway?.name === 'state') {
      const boxes = boxesOfGatewayState(payload);
      if (boxes !== null) this.#availability.gatewayBoxes(gateway.gatewayId, boxes);
    }
  }

  #publishOffline(moduleId: number): void {
    if (this.broker === undefined) return;
    this.broker
      .publish(this.options.topics.box(moduleId, 'availability'), 'offline', { retain: true })
      .catch((error: unknown) => {
        (this.options.logger ?? silentLogger).warn(
          { module_id: moduleId, err: messageOf(error) },
          'box availability not published',
        );
      });
  }

  /** Queues a write of the availability table after the ones before it. */
  #writeAvailability(moduleId: number | undefined, write: () => Promise<void>): void {
    this.#availabilityWrites = this.#availabilityWrites.then(write).catch((error: unknown) => {
      // A busy or closing database: the next change writes it again; the listeners still hear it.
      (this.options.logger ?? silentLogger).warn(
        { ...(moduleId === undefined ? {} : { module_id: moduleId }), err: messageOf(error) },
        'box availability not stored',
      );
    });
  }

  /** Resolves when the availability changes so far are stored (or failed and logged). */
  availabilityStored(): Promise<void> {
    return this.#availabilityWrites;
  }

  #derived(moduleId: number, derived: DerivedAvailability): void {
    const now = this.options.clock.now();
    this.#writeAvailability(moduleId, async () => {
      await this.#availabilityStore.store(moduleId, derived, now);
      // After the write: the stream's renderer reads the stored availability.
      this.options.ctx.events.publishBox(moduleId);
    });
    if (derived.availability === 'unknown') return;
    for (const listener of this.#availabilityListeners) listener(moduleId, derived.availability === 'online', derived);
  }

  /** Counters of the embedded broker (refused logins, publishes, subscriptions, packets), if it runs. */
  get brokerCounters(): EmbeddedBroker['counters'] | undefined {
    return this.broker?.counters;
  }

  /** Publishes a command to a box and waits for its response message (matched
   * by a fresh request_id) or the timeout. */
  sendCommand(
    moduleId: number,
    command: Buffer,
    context: Omit<CommandContext, 'request_id'>,
    timeoutMs: number,
  ): Promise<IngestedOutcome> {
    const requestId = randomUUID();
    const message: CommandMessage = {
      command: command.toString('base64'),
      context: { ...context, request_id: requestId },
    };
    const { clock, topics } = this.options;
    return new Promise((resolve) => {
      let settled = false;
      const finish = (outcome: IngestedOutcome): void => {
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
      this.#capture?.command(moduleId, topic, payload, command);
      if (this.broker !== undefined) {
        this.broker.publish(topic, payload).catch(() => finish({ error: 'broker_unavailable' }));
      } else {
        this.client?.publish(topic, payload, { queue: false });
      }
    });
  }

  /** Publishes a `sim/set` to a box (POST /api/operator/boxes/:module_id/sim;
   * a simulated box applies it, a real one never subscribes), with what the
   * broker made of it: taken, refused (an external broker's MQTT 5 PUBACK
   * reason code, such as 0x87 Not authorized from its ACL), or not sent (no
   * broker connected: an external broker's link is down, the embedded one
   * closing). */
  async publishSimSet(
    moduleId: number,
    settings: Readonly<Record<string, unknown>>,
  ): Promise<PublishOutcome & { topic: string }> {
    const topic = this.options.topics.box(moduleId, 'sim/set');
    const payload = JSON.stringify(settings);
    if (this.broker !== undefined) {
      try {
        await this.broker.publish(topic, payload);
        return { outcome: 'taken', topic };
      } catch {
        return { outcome: 'not_sent', topic }; // the embedded broker is closing
      }
    }
    if (this.client === undefined) return { outcome: 'not_sent', topic };
    return { ...(await this.client.publishAndWait(topic, payload)), topic };
  }

  async close(): Promise<void> {
    // A kept session (an external broker, a client id): leave the shared
    // subscription and handle what the broker still had queued here, then
    // end the session, so the broker routes no share of the responses to a
    // process that stopped on purpose (one killed keeps it: mqtt-service's
    // start). Not for a clean session, which ends with the connection anyway.
    const kept = this.keptResponses;
    if (kept !== undefined) await this.client?.leave([kept], { quietMs: 200, maxMs: 5_000 });
    // What is waiting is stored before the database closes.
    await this.ingestion.flush();
    await this.broker?.close();
    // The acknowledgements of what was just stored go out before the DISCONNECT.
    await new Promise((resolve) => setImmediate(resolve));
    await this.client?.stop({ endSession: kept !== undefined });
    await this.#availabilityWrites;
  }
}

/** `online` or `offline` (an availability payload), else undefined (an empty one clears a retained message). */
function onlineOf(payload: Buffer | string): boolean | undefined {
  const text = payload.toString();
  return text === 'online' ? true : text === 'offline' ? false : undefined;
}
