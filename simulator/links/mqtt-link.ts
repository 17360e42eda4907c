// A simulated box on MQTT (ARCHITECTURE.md, topics and messages): it takes
// commands and sim/set on its own topics, publishes its responses, its
// retained state and its availability (last will: offline), reconnects with
// backoff when the broker goes away, and keeps the responses it could not
// publish meanwhile (bounded) until it is back.
import mqtt, { type MqttClient } from 'mqtt';
import type { Clock, TimerHandle } from '../../lib/clock.js';
import { backoffDelay, defaultBackoff, type BackoffPolicy } from '../../lib/backoff.js';
import { silentLogger, type Logger } from '../../lib/logger.js';
import { MessageError, parseCommandMessage, parseJsonObject, type ResponseMessage } from '../../lib/mqtt-messages.js';
import { Topics } from '../../lib/mqtt-topics.js';
import { parseSimSet, SimSetError } from '../faults.js';
import type { SimulatedBox } from '../simulated-box.js';

export interface BoxMqttLinkOptions {
  readonly url: string;
  readonly username: string;
  readonly password: string;
  readonly clock: Clock;
  readonly topics?: Topics;
  readonly backoff?: BackoffPolicy;
  /** Responses kept while the broker is away; the oldest is dropped past it. */
  readonly queueLimit?: number;
  readonly logger?: Logger;
  /** How long one connection attempt may take, ms. */
  readonly connectTimeoutMs?: number;
}

export interface BoxMqttCounters {
  /** Messages on the command topic that were not a command (bad JSON, no base64 command). */
  badMessages: number;
  /** sim/set messages refused. */
  badSettings: number;
  /** Responses dropped because the offline queue was full. */
  queueOverflows: number;
  connects: number;
}

const QOS1 = { qos: 1 } as const;
const RETAINED = { qos: 1, retain: true } as const;

export class BoxMqttLink {
  readonly counters: BoxMqttCounters = { badMessages: 0, badSettings: 0, queueOverflows: 0, connects: 0 };
  readonly #topics: Topics;
  readonly #logger: Logger;
  readonly #queueLimit: number;
  readonly #queue: ResponseMessage[] = [];
  #client: MqttClient | undefined;
  #attempt = 0;
  #reconnectTimer: TimerHandle | undefined;
  /** Until this time (clock ms) the box stays off the network (fault). */
  #offlineUntil = 0;
  #stopped = false;
  #onChange = (): void => this.#publishState();

  constructor(
    readonly box: SimulatedBox,
    private readonly options: BoxMqttLinkOptions,
  ) {
    this.#topics = options.topics ?? new Topics();
    this.#logger = (options.logger ?? silentLogger).child({ component: 'sim:mqtt', module_id: box.moduleId });
    this.#queueLimit = options.queueLimit ?? 1_000;
  }

  get connected(): boolean {
    return this.#client?.connected === true;
  }

  /** Responses waiting for the broker. */
  get queued(): number {
    return this.#queue.length;
  }

  /** Connects (and keeps reconnecting). Resolves on the first connection. */
  start(): Promise<void> {
    const moduleId = this.box.moduleId;
    const client = mqtt.connect(this.options.url, {
      username: this.options.username,
      password: this.options.password,
      clientId: `${this.options.username}-${process.pid}-${Math.random().toString(16).slice(2, 8)}`,
      clean: true,
      reconnectPeriod: 0, // reconnection is ours: with backoff, on the injected clock
      connectTimeout: this.options.connectTimeoutMs ?? 10_000,
      will: { topic: this.#topics.box(moduleId, 'availability'), payload: Buffer.from('offline'), qos: 1, retain: true },
    });
    this.#client = client;
    client.on('connect', () => this.#connected());
    client.on('close', () => this.#scheduleReconnect());
    client.on('error', (error) => this.#logger.warn({ err: error.message }, 'mqtt error'));
    client.on('message', (topic, payload) => this.#message(topic, payload));
    this.box.on('change', this.#onChange);
    return new Promise((resolve, reject) => {
      const settle = (): void => {
        client.off('connect', settle);
        client.off('error', fail);
        resolve();
      };
      const fail = (error: Error): void => {
        // A refused login will not get better by retrying: say so at once.
        if ((error as { code?: number }).code === 4 || (error as { code?: number }).code === 5) {
          client.off('connect', settle);
          client.off('error', fail);
          this.#stopped = true;
          client.end(true);
          reject(new Error(`broker refused box ${moduleId}: ${error.message}`));
        }
      };
      client.on('connect', settle);
      client.on('error', fail);
    });
  }

  /** Drops off the network now (the broker sees the last will) and comes
   * back after `ms` (fault injection). */
  goOffline(ms: number): void {
    this.#offlineUntil = this.options.clock.now() + ms;
    this.#logger.info({ ms }, 'going offline');
    // Destroying the socket, not ending the session: the broker publishes the will.
    this.#client?.stream.destroy();
  }

  /** Publishes availability offline and disconnects for good. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.box.off('change', this.#onChange);
    if (this.#reconnectTimer !== undefined) this.options.clock.clearTimeout(this.#reconnectTimer);
    const client = this.#client;
    if (client === undefined) return;
    if (client.connected) {
      // Wait for the broker to take the retained 'offline', unless the
      // connection dies first (then the last will says the same).
      await new Promise<void>((resolve) => {
        client.once('close', () => resolve());
        client.publish(this.#topics.box(this.box.moduleId, 'availability'), 'offline', RETAINED, () => resolve());
      });
    }
    await client.endAsync(true);
  }

  #connected(): void {
    this.#attempt = 0;
    this.counters.connects++;
    const client = this.#client;
    if (client === undefined) return;
    const moduleId = this.box.moduleId;
    this.#logger.info({}, 'connected');
    client.subscribe([this.#topics.box(moduleId, 'command'), this.#topics.box(moduleId, 'sim/set')], QOS1, (error) => {
      if (error) this.#logger.error({ err: error.message }, 'subscribe refused');
    });
    client.publish(this.#topics.box(moduleId, 'availability'), 'online', RETAINED);
    this.#publishState();
    // Responses answered while the broker was away, oldest first.
    for (const message of this.#queue.splice(0)) this.#publishResponse(message);
  }

  #scheduleReconnect(): void {
    if (this.#stopped || this.#reconnectTimer !== undefined) return;
    const now = this.options.clock.now();
    const backoff = backoffDelay(this.options.backoff ?? defaultBackoff, this.#attempt++);
    const delay = Math.max(backoff, this.#offlineUntil - now);
    this.#reconnectTimer = this.options.clock.setTimeout(() => {
      this.#reconnectTimer = undefined;
      if (!this.#stopped) this.#client?.reconnect();
    }, delay);
  }

  #message(topic: string, payload: Buffer): void {
    const parsed = this.#topics.parseBoxTopic(topic);
    if (parsed?.name === 'command') this.#command(payload);
    else if (parsed?.name === 'sim/set') this.#simSet(payload);
  }

  #command(payload: Buffer): void {
    let command: ReturnType<typeof parseCommandMessage>;
    try {
      command = parseCommandMessage(payload);
    } catch (error) {
      // No bytes to answer (ARCHITECTURE.md): counted and dropped.
      this.counters.badMessages++;
      this.#logger.warn({ reason: (error as MessageError).message }, 'command message dropped');
      return;
    }
    this.box.handleCommand(command.frame).then(
      (response) => {
        if (response === null) return;
        this.#publishResponse({
          command: command.message.command,
          response: response.toString('base64'),
          received_at: new Date(this.options.clock.now()).toISOString(),
          via: 'mqtt',
          context: command.message.context ?? {},
        });
      },
      (error: unknown) => this.#logger.error({ err: (error as Error).message }, 'command could not be answered'),
    );
  }

  #simSet(payload: Buffer): void {
    try {
      const command = parseSimSet(parseJsonObject(payload, 'sim/set'));
      this.box.apply(command);
      if (command.offlineSeconds !== undefined && command.offlineSeconds > 0) this.goOffline(command.offlineSeconds * 1000);
    } catch (error) {
      this.counters.badSettings++;
      this.#logger.warn({ reason: error instanceof SimSetError || error instanceof MessageError ? error.message : String(error) }, 'sim/set refused');
    }
  }

  #publishResponse(message: ResponseMessage): void {
    const client = this.#client;
    if (client?.connected !== true) {
      this.#enqueue(message);
      return;
    }
    client.publish(this.#topics.box(this.box.moduleId, 'response'), JSON.stringify(message), QOS1, (error) => {
      // Lost with the connection before the broker took it: keep it for the next one.
      if (error) this.#enqueue(message);
    });
  }

  #enqueue(message: ResponseMessage): void {
    if (this.#queue.length >= this.#queueLimit) {
      this.#queue.shift();
      this.counters.queueOverflows++;
    }
    this.#queue.push(message);
  }

  #publishState(): void {
    const client = this.#client;
    if (client?.connected !== true) return;
    client.publish(this.#topics.box(this.box.moduleId, 'state'), JSON.stringify(this.box.snapshot()), RETAINED);
  }
}
