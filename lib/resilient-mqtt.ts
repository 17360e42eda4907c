// An MQTT connection that stays up: it reconnects with jittered backoff on
// the injected clock (MQTT.js's own reconnect is a fixed period), keeps what
// it publishes in a bounded queue (in memory, or a caller's persistent one)
// until the broker's PUBACK, publishing what waits there on every
// (re)connection, and can be told to
// drop off the network for a while (fault injection). The simulator's boxes,
// the gateway and the API's ingestion client are built on it.
//
// A queued message the broker refuses for good is dropped after
// MAX_PUBLISH_TRIES tries, counted (refusedPublishes) and logged once, so
// it is not sent again forever and the messages behind it go. A refusal is
// an MQTT 5 PUBACK reason code of 0x80 or more (0x87 Not authorized, ...;
// the message is sent again at once until the tries are spent), or a
// connection the broker closes on it (a packet over its size limit: MQTT
// 3.1.1 has no refusal code, and MQTT 5's DISCONNECT names no message).
// Which message a close was for is found by sending it alone: after a
// connection closed with messages in flight, the next one sends the oldest
// of them (the broker answers in order, so those before it got their PUBACK)
// alone first, and the others once it is answered; a close while it is
// alone is one of its tries.
import { EventEmitter } from 'node:events';
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import { ACK_WINDOW, AckPipeline } from './ack-pipeline.js';
import type { Clock, TimerHandle } from './clock.js';
import { backoffDelay, defaultBackoff, type BackoffPolicy } from './backoff.js';
import { silentLogger, type Logger } from './logger.js';
import { messageOf } from './message-of.js';

export interface QueuedPublish {
  readonly topic: string;
  readonly payload: string;
  readonly qos: 0 | 1;
  readonly retain: boolean;
}

/** A queued publish and its key in its queue. */
export interface QueuedEntry {
  readonly id: number;
  readonly item: QueuedPublish;
}

/** Where publishes wait while the broker is away. An entry stays until the
 * broker took it (its PUBACK): a process killed between the publish and the
 * PUBACK publishes it again from a persistent queue. A persistent queue
 * hands an entry out for publishing only once it is on disk (`durable`):
 * nothing is published that a crash could make the process forget. */
export interface PublishQueue {
  /** Entries waiting, those being published and those not on disk yet included. */
  readonly size: number;
  /** Adds one; `dropped` when the oldest had to go to make room. `durable`
   * (a persistent queue): settles once the entry is on disk, or its write
   * failed; it is not published before. */
  push(item: QueuedPublish): { id: number; dropped: boolean; durable?: Promise<void> };
  /** Everything waiting that may be published (for a persistent queue, what
   * its writes settled), oldest first; nothing is removed. */
  entries(): readonly QueuedEntry[];
  /** Removes an entry the broker took (no-op if it was dropped meanwhile). */
  remove(id: number): void;
}

/** A bounded queue in memory: the oldest is dropped past the limit. */
export class MemoryPublishQueue implements PublishQueue {
  readonly #entries: QueuedEntry[] = [];
  #nextId = 1;
  constructor(private readonly limit = 1_000) {}
  get size(): number {
    return this.#entries.length;
  }
  push(item: QueuedPublish): { id: number; dropped: boolean } {
    const id = this.#nextId++;
    this.#entries.push({ id, item });
    if (this.#entries.length <= this.limit) return { id, dropped: false };
    this.#entries.shift();
    return { id, dropped: true };
  }
  entries(): readonly QueuedEntry[] {
    return [...this.#entries];
  }
  remove(id: number): void {
    const index = this.#entries.findIndex((entry) => entry.id === id);
    if (index >= 0) this.#entries.splice(index, 1);
  }
}

export interface ResilientMqttOptions {
  readonly url: string;
  readonly username?: string;
  readonly password?: string;
  readonly clientId: string;
  readonly clock: Clock;
  readonly will?: { readonly topic: string; readonly payload: string };
  readonly backoff?: BackoffPolicy;
  readonly queue?: PublishQueue;
  readonly logger?: Logger;
  readonly connectTimeoutMs?: number;
  /** Subscriptions made on every connection. */
  readonly subscriptions?: readonly string[];
  readonly protocolVersion?: 4 | 5;
  /** Runs on each QoS 1 message before its PUBACK is sent: the broker keeps
   * (and redelivers) a message until the work is done. Must not reject.
   * Up to `ackWindow` messages are worked on at once (see AckPipeline). */
  readonly beforeAck?: (topic: string, payload: Buffer) => Promise<void>;
  /** At most this many messages of `beforeAck` unacknowledged at once
   * (MQTT 5: the Receive Maximum told to the broker); default ACK_WINDOW. */
  readonly ackWindow?: number;
  /** Keep the broker's session across connections (clean start off, MQTT 5
   * Session Expiry Interval in seconds): what the broker routed to this
   * client and it did not acknowledge yet waits for it, on a reconnection
   * or a new process with the same client id, instead of being dropped with
   * the session. Without it every connection starts clean. */
  readonly sessionExpirySeconds?: number;
}

export interface ResilientMqttEvents {
  /** Connected (first time or again); subscriptions are being made. */
  connect: [];
  /** Lost the connection; reconnecting. */
  disconnect: [];
  message: [topic: string, payload: Buffer];
}

export interface ResilientMqttCounters {
  connects: number;
  /** Publishes dropped because the offline queue was full. */
  queueOverflows: number;
  /** Publishes dropped because the broker refused them MAX_PUBLISH_TRIES times. */
  refusedPublishes: number;
}

/** Tries of a queued message the broker refuses before it is dropped. */
export const MAX_PUBLISH_TRIES = 3;

/** What became of a publish the caller waited for (publishAndWait). */
export type PublishOutcome =
  | { readonly outcome: 'taken' }
  | { readonly outcome: 'refused'; readonly reasonCode: number; readonly reason: string }
  | { readonly outcome: 'not_sent' };

/** The MQTT 5 reason code of a broker's refusal (0x80 and above: a PUBACK's
 * or a DISCONNECT's), from an error of MQTT.js, else undefined. */
export function refusalCodeOf(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'number' && code >= 0x80 ? code : undefined;
}

/** "0x87 Not authorized": a reason code as a person reads it. */
export function reasonOf(reasonCode: number): string {
  const name = REASON_NAMES[reasonCode];
  return `0x${reasonCode.toString(16).padStart(2, '0')}${name === undefined ? '' : ` ${name}`}`;
}

/** MQTT 5's reason codes of refusals a broker sends on a PUBACK or a DISCONNECT (3.4.2.1, 3.14.2.1). */
const REASON_NAMES: Readonly<Record<number, string>> = {
  0x80: 'Unspecified error',
  0x81: 'Malformed Packet',
  0x82: 'Protocol Error',
  0x83: 'Implementation specific error',
  0x87: 'Not authorized',
  0x89: 'Server busy',
  0x8b: 'Server shutting down',
  0x8d: 'Keep Alive timeout',
  0x8e: 'Session taken over',
  0x90: 'Topic Name invalid',
  0x91: 'Packet Identifier in use',
  0x93: 'Receive Maximum exceeded',
  0x94: 'Topic Alias invalid',
  0x95: 'Packet too large',
  0x96: 'Message rate too high',
  0x97: 'Quota exceeded',
  0x98: 'Administrative action',
  0x99: 'Payload format invalid',
  0x9a: 'Retain not supported',
  0x9b: 'QoS not supported',
  0x9c: 'Use another server',
  0x9d: 'Server moved',
  0x9f: 'Connection rate exceeded',
  0xa0: 'Maximum connect time',
};

/** CONNACK codes that retrying cannot fix: bad credentials, not authorized. */
const REFUSALS = new Set([4, 5, 134, 135]);

export class ResilientMqttClient extends EventEmitter<ResilientMqttEvents> {
  readonly counters: ResilientMqttCounters = { connects: 0, queueOverflows: 0, refusedPublishes: 0 };
  readonly #queue: PublishQueue;
  readonly #logger: Logger;
  #client: MqttClient | undefined;
  /** The QoS 1 messages of beforeAck being worked on, acknowledged once done. */
  #acks: AckPipeline | undefined;
  #attempt = 0;
  #reconnectTimer: TimerHandle | undefined;
  #offlineUntil = 0;
  #stopped = false;
  /** Queue entries sent on the current connection and not yet acknowledged. */
  #sending = new Set<number>();
  /** Refusals of queued entries so far (entries refused at least once). */
  readonly #refusals = new Map<number, number>();
  /** The entry sent alone first on the next connection: the oldest in flight when the last one closed. */
  #suspect: number | undefined;
  /** The suspect is out alone on this connection; the others wait for its answer. */
  #probing = false;
  readonly #subscriptions: Set<string>;

  constructor(private readonly options: ResilientMqttOptions) {
    super();
    this.#queue = options.queue ?? new MemoryPublishQueue();
    this.#logger = options.logger ?? silentLogger;
    this.#subscriptions = new Set(options.subscriptions ?? []);
  }

  /** Subscribes now if connected, and again on every reconnection. */
  addSubscription(topic: string): void {
    if (this.#subscriptions.has(topic)) return;
    this.#subscriptions.add(topic);
    if (this.#client?.connected === true) this.#subscribe(this.#client, [topic]);
  }

  get connected(): boolean {
    return this.#client?.connected === true;
  }

  /** Publishes waiting for the broker. */
  get queued(): number {
    return this.#queue.size;
  }

  /** Connects; resolves on the first connection, rejects if the broker
   * refuses the credentials (retrying would not help). Other failures are
   * retried with backoff. */
  start(): Promise<void> {
    const { options } = this;
    const connectOptions: IClientOptions = {
      clientId: options.clientId,
      clean: options.sessionExpirySeconds === undefined,
      // MQTT 3.1.1 has neither: a session kept there lasts as the broker's
      // settings say, and the broker's own window bounds what it sends unacknowledged.
      ...(options.protocolVersion === 5
        ? {
            properties: {
              ...(options.sessionExpirySeconds === undefined
                ? {}
                : { sessionExpiryInterval: options.sessionExpirySeconds }),
              ...(options.beforeAck === undefined ? {} : { receiveMaximum: options.ackWindow ?? ACK_WINDOW }),
            },
          }
        : {}),
      reconnectPeriod: 0, // reconnection is ours: with backoff, on the injected clock
      connectTimeout: options.connectTimeoutMs ?? 10_000,
      protocolVersion: options.protocolVersion ?? 4,
      ...(options.username === undefined ? {} : { username: options.username }),
      ...(options.password === undefined ? {} : { password: options.password }),
      ...(options.will === undefined
        ? {}
        : { will: { topic: options.will.topic, payload: Buffer.from(options.will.payload), qos: 1, retain: true } }),
    };
    const client = mqtt.connect(options.url, connectOptions);
    this.#client = client;
    if (options.beforeAck !== undefined) this.#acks = new AckPipeline(client, options.beforeAck);
    client.on('connect', () => this.#connected(client));
    client.on('close', () => this.#closed());
    client.on('error', (error) => this.#logger.warn({ err: error.message }, 'mqtt error'));
    client.on('message', (topic, payload) => this.emit('message', topic, payload));
    return new Promise((resolve, reject) => {
      const settle = (): void => {
        client.off('error', fail);
        resolve();
      };
      const fail = (error: Error & { code?: number }): void => {
        if (error.code === undefined || !REFUSALS.has(error.code)) return;
        client.off('connect', settle);
        client.off('error', fail);
        this.#stopped = true;
        client.end(true);
        reject(new Error(`the broker refused ${options.username ?? 'the client'}: ${error.message}`));
      };
      client.once('connect', settle);
      client.on('error', fail);
    });
  }

  /** Publishes. Unless `queue` is false, the publish goes through the queue
   * first (see `enqueue`) and leaves it only once the broker took it: while
   * the broker is away it waits there, and a connection lost before the
   * PUBACK (MQTT.js forgets its in-flight publishes on reconnect) or a
   * restart with a persistent queue sends it again. */
  publish(topic: string, payload: string, options: { qos?: 0 | 1; retain?: boolean; queue?: boolean } = {}): void {
    if (options.queue !== false) {
      void this.enqueue(topic, payload, options);
      return;
    }
    const client = this.#client;
    if (client?.connected === true)
      client.publish(topic, payload, { qos: options.qos ?? 1, retain: options.retain ?? false });
  }

  /** Puts a publish in the queue and publishes it once the queue keeps it:
   * at once for a queue in memory, once it is on disk for a persistent one
   * (nothing is published that a crash could make this process forget).
   * Resolves then: whoever must not move on before that waits for it. */
  enqueue(topic: string, payload: string, options: { qos?: 0 | 1; retain?: boolean } = {}): Promise<void> {
    const item: QueuedPublish = { topic, payload, qos: options.qos ?? 1, retain: options.retain ?? false };
    const { id, dropped, durable } = this.#queue.push(item);
    if (dropped) this.counters.queueOverflows++;
    if (durable === undefined) {
      if (this.#client?.connected === true && !this.#probing) this.#send(this.#client, { id, item });
      return Promise.resolve();
    }
    return durable.then(() => {
      // The client of now: the connection may have come or gone while the write ran.
      const client = this.#client;
      if (client?.connected === true && !this.#stopped && !this.#probing) this.#send(client, { id, item });
    });
  }

  /** Publishes (QoS 1, not queued) and resolves with what the broker made
   * of it: taken (its PUBACK), refused (an MQTT 5 PUBACK reason code of
   * 0x80 or more, such as 0x87 Not authorized from its ACL), or not sent
   * (no connection, or it went away first). */
  publishAndWait(topic: string, payload: string, options: { retain?: boolean } = {}): Promise<PublishOutcome> {
    const client = this.#client;
    if (client?.connected !== true) return Promise.resolve({ outcome: 'not_sent' });
    return new Promise((resolve) => {
      const closed = (): void => resolve({ outcome: 'not_sent' });
      client.once('close', closed);
      client.publish(topic, payload, { qos: 1, retain: options.retain ?? false }, (error) => {
        client.off('close', closed);
        const reasonCode = refusalCodeOf(error);
        if (reasonCode !== undefined) resolve({ outcome: 'refused', reasonCode, reason: reasonOf(reasonCode) });
        else resolve(error ? { outcome: 'not_sent' } : { outcome: 'taken' });
      });
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

  /**
   * Before a stop on purpose with a kept session: leaves `topics` (the
   * broker routes nothing more of them here) and waits until no message has
   * arrived for `quietMs` (at most `maxMs`), so what the broker had queued
   * for this session arrives and is handled now, not left behind.
   */
  async leave(topics: readonly string[], { quietMs, maxMs }: { quietMs: number; maxMs: number }): Promise<void> {
    const client = this.#client;
    if (client?.connected !== true) return;
    for (const topic of topics) this.#subscriptions.delete(topic);
    try {
      await client.unsubscribeAsync([...topics]);
    } catch (error) {
      this.#logger.warn({ err: messageOf(error) }, 'unsubscribe failed');
      return;
    }
    const { clock } = this.options;
    const deadline = clock.now() + maxMs;
    let lastMessage = clock.now();
    const heard = (): void => {
      lastMessage = clock.now();
    };
    client.on('message', heard);
    try {
      while (clock.now() < deadline && clock.now() - lastMessage < quietMs && this.connected) {
        await new Promise<void>((resolve) => clock.setTimeout(resolve, Math.min(quietMs, 50)));
      }
    } finally {
      client.off('message', heard);
    }
  }

  /** Disconnects for good. `endSession`: the broker drops this client's kept
   * session (MQTT 5: Session Expiry Interval 0 in the DISCONNECT), as a
   * process that stops on purpose should; without it a kept session waits
   * for the same client id to come back. */
  async stop({ endSession = false }: { endSession?: boolean } = {}): Promise<void> {
    this.#stopped = true;
    if (this.#reconnectTimer !== undefined) this.options.clock.clearTimeout(this.#reconnectTimer);
    const client = this.#client;
    if (client === undefined) return;
    // The PUBACKs of what is being worked on go out before the DISCONNECT.
    await this.#acks?.settled();
    if (endSession && client.connected && this.options.protocolVersion === 5) {
      await new Promise<void>((resolve) =>
        client.end(false, { properties: { sessionExpiryInterval: 0 } }, () => resolve()),
      );
      return;
    }
    await client.endAsync(true);
  }

  #connected(client: MqttClient): void {
    disableNagle(client);
    this.#attempt = 0;
    this.counters.connects++;
    this.#logger.info({}, 'connected');
    if (this.#subscriptions.size > 0) this.#subscribe(client, [...this.#subscriptions]);
    this.emit('connect');
    this.#publishQueued(client);
  }

  /** Publishes everything in the queue on a new connection: what a previous
   * connection (or run) sent without a PUBACK goes again; the suspect of the
   * last close alone first. */
  #publishQueued(client: MqttClient): void {
    this.#sending = new Set();
    this.#probing = false;
    const entries = this.#queue.entries();
    const suspect = entries.find((entry) => entry.id === this.#suspect);
    if (suspect === undefined) {
      this.#suspect = undefined;
      for (const entry of entries) this.#send(client, entry);
      return;
    }
    this.#probing = true;
    this.#send(client, suspect, () => {
      // Answered: taken, or refused with a reason code (and sent again).
      this.#probing = false;
      this.#suspect = undefined;
      for (const entry of this.#queue.entries()) this.#send(client, entry);
    });
  }

  /** An entry leaves the queue once the broker took it (PUBACK; written, for
   * QoS 0), never before; after a connection lost, it waits for the next
   * one; refused (a reason code), it goes again at once until its tries are
   * spent. `answered` runs on the broker's answer, not on a lost connection. */
  #send(client: MqttClient, { id, item }: QueuedEntry, answered?: () => void): void {
    const sending = this.#sending;
    if (sending.has(id)) return;
    sending.add(id);
    client.publish(item.topic, item.payload, { qos: item.qos, retain: item.retain }, (error) => {
      // MQTT.js types the error optional but may pass null: no error either way.
      if (!error) {
        sending.delete(id);
        this.#queue.remove(id);
        this.#refusals.delete(id);
        answered?.();
        return;
      }
      const reasonCode = refusalCodeOf(error);
      // Still in flight for the close that comes (it names the suspect).
      if (reasonCode === undefined) return;
      sending.delete(id);
      const dropped = this.#refused({ id, item }, reasonOf(reasonCode));
      if (!dropped && sending === this.#sending && client.connected) this.#send(client, { id, item });
      answered?.();
    });
  }

  /** One more refusal of an entry; past MAX_PUBLISH_TRIES it leaves the
   * queue, counted and logged. Returns whether it was dropped. */
  #refused({ id, item }: QueuedEntry, reason: string): boolean {
    const tries = (this.#refusals.get(id) ?? 0) + 1;
    if (tries < MAX_PUBLISH_TRIES) {
      this.#refusals.set(id, tries);
      return false;
    }
    this.#refusals.delete(id);
    this.#queue.remove(id);
    if (this.#suspect === id) this.#suspect = undefined;
    this.counters.refusedPublishes++;
    this.#logger.error(
      { topic: item.topic, bytes: Buffer.byteLength(item.payload), tries, reason },
      'publish dropped: the broker refused it every time',
    );
    return true;
  }

  /** On a close: a suspect out alone had a try; else the oldest entry in
   * flight becomes the suspect. */
  #noteSuspect(): void {
    if (this.#probing && this.#suspect !== undefined) {
      this.#probing = false;
      const entry = this.#queue.entries().find((queued) => queued.id === this.#suspect);
      if (entry !== undefined) this.#refused(entry, 'the broker closed the connection while it was sent alone');
      return;
    }
    this.#suspect = undefined;
    for (const id of this.#sending) {
      this.#suspect = id;
      break;
    }
  }

  #subscribe(client: MqttClient, topics: string[]): void {
    client.subscribe(topics, { qos: 1 }, (error, granted) => {
      if (error) this.#logger.error({ err: error.message }, 'subscribe failed');
      const refused = (granted ?? []).filter((grant) => grant.qos === 128);
      for (const grant of refused) this.#logger.error({ topic: grant.topic }, 'subscription refused by the broker');
      // The broker routes to a subscription from its SUBACK on: an operator
      // (or a test) knows from this line that nothing published now is missed.
      if (!error && refused.length === 0) this.#logger.info({ topics }, 'subscribed');
    });
  }

  #closed(): void {
    if (this.#stopped) return;
    this.#noteSuspect();
    this.emit('disconnect');
    if (this.#reconnectTimer !== undefined) return;
    const delay = Math.max(
      backoffDelay(this.options.backoff ?? defaultBackoff, this.#attempt++),
      this.#offlineUntil - this.options.clock.now(),
    );
    this.#reconnectTimer = this.options.clock.setTimeout(() => {
      this.#reconnectTimer = undefined;
      if (!this.#stopped) this.#client?.reconnect();
    }, delay);
  }
}

/**
 * Small MQTT packets on a socket with Nagle's algorithm wait for the peer's
 * delayed ACK (40 ms on Linux) at every hop; MQTT.js leaves it on. A command
 * round trip through broker and gateway went from 90 ms to a few.
 */
export function disableNagle(client: MqttClient): void {
  const stream = client.stream as { setNoDelay?: (noDelay: boolean) => void };
  stream.setNoDelay?.(true);
}
