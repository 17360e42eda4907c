// A simulated box on MQTT (docs/architecture.md, MQTT topics and Messages): it takes
// commands and sim/set on its own topics, publishes its responses, its
// retained state and its availability (last will: offline). The connection
// (lib/resilient-mqtt.ts) reconnects with backoff and keeps the responses
// answered while the broker was away (bounded) until it is back. With a
// capture, each command message and each response message is recorded with
// the frame inside it and that frame's opened record.
import type { Clock } from '../../lib/clock.js';
import type { BackoffPolicy } from '../../lib/backoff.js';
import { silentLogger, type Logger } from '../../lib/logger.js';
import { MessageError, parseCommandMessage, parseJsonObject, type ResponseMessage } from '../../lib/mqtt-messages.js';
import { Topics } from '../../lib/mqtt-topics.js';
import { MemoryPublishQueue, ResilientMqttClient } from '../../lib/resilient-mqtt.js';
import { parseSimSet, SimSetError, type SimSetCommand } from '../../lib/sim-set.js';
import type { SimulatedBox } from '../simulated-box.js';
import { messageOf } from '../../lib/message-of.js';
import { CaptureDirection } from '../../lib/capture/link-capture.js';
import { recordMqttMessage, recordMqttMessageWithFrame } from '../../lib/capture/mqtt-capture.js';
import type { BoxCapture } from './box-capture.js';

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
  /** Records this link (interface `mqtt:<broker URL>`, brokerName). */
  readonly capture?: BoxCapture;
}

export interface BoxMqttCounters {
  /** Messages on the command topic that were not a command (bad JSON, no base64 command). */
  badMessages: number;
  /** sim/set messages refused. */
  badSettings: number;
}

export class BoxMqttLink {
  readonly counters: BoxMqttCounters = { badMessages: 0, badSettings: 0 };
  readonly #topics: Topics;
  readonly #logger: Logger;
  readonly #client: ResilientMqttClient;
  readonly #onChange = (): void => this.#publishState();

  constructor(
    readonly box: SimulatedBox,
    private readonly options: BoxMqttLinkOptions,
  ) {
    this.#topics = options.topics ?? new Topics();
    this.#logger = (options.logger ?? silentLogger).child({ component: 'sim:mqtt', module_id: box.moduleId });
    const moduleId = box.moduleId;
    this.#client = new ResilientMqttClient({
      url: options.url,
      username: options.username,
      password: options.password,
      clientId: `${options.username}-${process.pid}-${Math.random().toString(16).slice(2, 8)}`,
      clock: options.clock,
      will: { topic: this.#topics.box(moduleId, 'availability'), payload: 'offline' },
      queue: new MemoryPublishQueue(options.queueLimit ?? 1_000),
      logger: this.#logger,
      subscriptions: [this.#topics.box(moduleId, 'command'), this.#topics.box(moduleId, 'sim/set')],
      ...(options.backoff === undefined ? {} : { backoff: options.backoff }),
    });
    this.#client.on('connect', () => {
      this.#client.publish(this.#topics.box(moduleId, 'availability'), 'online', { retain: true, queue: false });
      this.#publishState();
    });
    this.#client.on('message', (topic, payload) => this.#message(topic, payload));
  }

  get connected(): boolean {
    return this.#client.connected;
  }

  /** Responses waiting for the broker. */
  get queued(): number {
    return this.#client.queued;
  }

  get connects(): number {
    return this.#client.counters.connects;
  }

  /** Connects (and keeps reconnecting). Resolves on the first connection. */
  async start(): Promise<void> {
    this.box.on('change', this.#onChange);
    await this.#client.start();
  }

  /** Drops off the network now (the broker sees the last will) and comes
   * back after `ms` (fault injection). */
  goOffline(ms: number): void {
    this.#client.goOffline(ms);
  }

  /** Power lost: the connection is destroyed without a DISCONNECT (the
   * broker publishes the last will, offline) and never comes back. */
  async cut(): Promise<void> {
    this.box.off('change', this.#onChange);
    this.#client.goOffline(Number.POSITIVE_INFINITY);
    await this.#client.stop();
  }

  /** Publishes availability offline and disconnects for good. */
  async stop(): Promise<void> {
    this.box.off('change', this.#onChange);
    await this.#client.publishAndWait(this.#topics.box(this.box.moduleId, 'availability'), 'offline', { retain: true });
    await this.#client.stop();
  }

  #message(topic: string, payload: Buffer): void {
    const parsed = this.#topics.parseBoxTopic(topic);
    if (parsed?.name === 'command') this.#command(topic, payload);
    else if (parsed?.name === 'sim/set') this.#simSet(payload);
  }

  #command(topic: string, payload: Buffer): void {
    const capture = this.options.capture;
    if (capture !== undefined) {
      const frame = recordMqttMessage(capture.link, CaptureDirection.toBox, topic, payload, this.box.moduleId);
      if (frame !== undefined) capture.openedCommand(frame);
    }
    let command: ReturnType<typeof parseCommandMessage>;
    try {
      command = parseCommandMessage(payload);
    } catch (error) {
      // No bytes to answer (docs/architecture.md, MQTT topics): counted and dropped.
      this.counters.badMessages++;
      this.#logger.warn({ reason: (error as MessageError).message }, 'command message dropped');
      return;
    }
    this.box.handleCommand(command.frame).then(
      (response) => {
        if (response === null) return;
        const message: ResponseMessage = {
          command: command.message.command,
          response: response.toString('base64'),
          received_at: new Date(this.options.clock.now()).toISOString(),
          via: 'mqtt',
          context: command.message.context ?? {},
        };
        const responseTopic = this.#topics.box(this.box.moduleId, 'response');
        const published = JSON.stringify(message);
        this.#client.publish(responseTopic, published);
        if (capture !== undefined) {
          recordMqttMessageWithFrame(
            capture.link,
            CaptureDirection.fromBox,
            responseTopic,
            Buffer.from(published),
            response,
            this.box.moduleId,
          );
          capture.openedResponse(response, command.frame);
        }
      },
      (error: unknown) => this.#logger.error({ err: messageOf(error) }, 'command could not be answered'),
    );
  }

  /** Applies a `sim/set` to the box and, with `offlineSeconds`, to this link. */
  simSet(command: SimSetCommand): void {
    this.box.apply(command);
    if (command.offlineSeconds !== undefined && command.offlineSeconds > 0)
      this.goOffline(command.offlineSeconds * 1000);
  }

  #simSet(payload: Buffer): void {
    try {
      this.simSet(parseSimSet(parseJsonObject(payload, 'sim/set')));
    } catch (error) {
      this.counters.badSettings++;
      this.#logger.warn(
        { reason: error instanceof SimSetError || error instanceof MessageError ? error.message : String(error) },
        'sim/set refused',
      );
    }
  }

  #publishState(): void {
    // Retained: only the latest matters, so a state is never queued.
    this.#client.publish(this.#topics.box(this.box.moduleId, 'state'), JSON.stringify(this.box.snapshot()), {
      retain: true,
      queue: false,
    });
  }
}
