// The suite over MQTT (docs/architecture.md, MQTT topics and Messages): command
// messages on the box's command topic, each with its own request_id in the
// context; the response message carrying that request_id is its answer.
// The retained state topic shows the barrier. Works for a simulated box on
// the broker and for a real box behind a gateway alike. With a capture, the
// target records every message it publishes or receives, and the frame
// inside each command and response message.
import { randomBytes } from 'node:crypto';
import mqtt, { type MqttClient } from 'mqtt';
import { CaptureDirection, type LinkCapture } from '../../lib/capture/link-capture.js';
import { recordMqttMessage } from '../../lib/capture/mqtt-capture.js';
import type { Clock, TimerHandle } from '../../lib/clock.js';
import { parseJsonObject, type CommandMessage } from '../../lib/mqtt-messages.js';
import type { Topics } from '../../lib/mqtt-topics.js';
import { Barrier } from '../../firmware-protocol/index.js';
import type { BarrierObservation, BoxTarget, Exchange } from '../box-target.js';
import { BarrierFeed } from './barrier-feed.js';
import { mqttGarbage } from './garbage.js';

export interface MqttBoxTargetOptions {
  readonly url: string;
  readonly username?: string;
  readonly password?: string;
  readonly moduleId: number;
  readonly topics: Topics;
  readonly clock: Clock;
  readonly connectTimeoutMs?: number;
  /** Records the messages and their frames (interface `mqtt:<url>`, lib/capture/mqtt-capture.ts's brokerName). */
  readonly capture?: LinkCapture;
}

const BARRIER_BY_NAME: Readonly<Record<string, Barrier>> = {
  closed: Barrier.CLOSED,
  opening: Barrier.OPENING,
  open: Barrier.OPEN,
  closing: Barrier.CLOSING,
  fault: Barrier.FAULT,
};

interface Pending {
  readonly resolve: (message: Record<string, unknown>) => void;
}

export class MqttBoxTarget implements BoxTarget {
  readonly kind = 'mqtt' as const;
  readonly badReports = 0;
  /** Response messages that answered no command of this run (other tools', or late ones). */
  strayResponses = 0;
  readonly #barrier = new BarrierFeed();
  readonly #pending = new Map<string, Pending>();
  readonly #runId = randomBytes(4).toString('hex');
  #next = 0;
  #client: MqttClient | undefined;

  constructor(private readonly options: MqttBoxTargetOptions) {}

  async open(): Promise<void> {
    const { options } = this;
    const client = await mqtt.connectAsync(options.url, {
      clientId: `parkbench-conformance-${this.#runId}`,
      clean: true,
      reconnectPeriod: 0,
      connectTimeout: options.connectTimeoutMs ?? 10_000,
      ...(options.username === undefined ? {} : { username: options.username }),
      ...(options.password === undefined ? {} : { password: options.password }),
    });
    this.#client = client;
    client.on('message', (topic, payload) => this.#message(topic, payload));
    const granted = await client.subscribeAsync([this.#topic('response'), this.#topic('state')], { qos: 1 });
    const refused = granted.filter((grant) => grant.qos === 128).map((grant) => grant.topic);
    if (refused.length > 0) throw new Error(`the broker refused the subscription to ${refused.join(', ')}`);
  }

  async exchange(command: Buffer, timeoutMs: number): Promise<Exchange> {
    const { clock } = this.options;
    const client = this.#client;
    const started = clock.now();
    if (client?.connected !== true) return { command, response: null, error: 'link_down', elapsedMs: 0 };
    const requestId = `conformance-${this.#runId}-${++this.#next}`;
    let timer: TimerHandle | undefined;
    const answered = new Promise<Record<string, unknown> | null>((resolve) => {
      this.#pending.set(requestId, { resolve });
      timer = clock.setTimeout(() => resolve(null), timeoutMs);
    });
    const message: CommandMessage = { command: command.toString('base64'), context: { request_id: requestId } };
    const payload = JSON.stringify(message);
    this.#recordSent(payload);
    await client.publishAsync(this.#topic('command'), payload, { qos: 1 });
    const response = await answered;
    if (timer !== undefined) clock.clearTimeout(timer);
    this.#pending.delete(requestId);
    const elapsedMs = clock.now() - started;
    if (response === null) return { command, response: null, error: 'timeout', elapsedMs };
    // A gateway publishes `"response": null` with an error when the box was silent.
    if (typeof response.response !== 'string')
      return { command, response: null, error: response.error === 'link_down' ? 'link_down' : 'timeout', elapsedMs };
    return { command, response: Buffer.from(response.response, 'base64'), elapsedMs };
  }

  async sendGarbage(): Promise<void> {
    const client = this.#client;
    if (client === undefined) return;
    for (const payload of mqttGarbage()) {
      this.#recordSent(payload);
      await client.publishAsync(this.#topic('command'), payload, { qos: 1 });
    }
  }

  onBarrier(listener: (observation: BarrierObservation) => void): void {
    this.#barrier.listen(listener);
  }

  async close(): Promise<void> {
    for (const pending of this.#pending.values()) pending.resolve({});
    await this.#client?.endAsync(true);
  }

  #topic(name: 'command' | 'response' | 'state'): string {
    return this.options.topics.box(this.options.moduleId, name);
  }

  /** A message as published on the command topic, and its frame when it carries one. */
  #recordSent(payload: string): void {
    const { capture, moduleId } = this.options;
    if (capture !== undefined)
      recordMqttMessage(capture, CaptureDirection.toBox, this.#topic('command'), Buffer.from(payload), moduleId);
  }

  #message(topic: string, payload: Buffer): void {
    const { capture, moduleId } = this.options;
    // A state message carries no frame: recorded as a message alone.
    if (capture !== undefined) recordMqttMessage(capture, CaptureDirection.fromBox, topic, payload, moduleId);
    let document: Record<string, unknown>;
    try {
      document = parseJsonObject(payload, topic);
    } catch {
      return;
    }
    if (topic === this.#topic('state')) {
      const barrier = typeof document.barrier === 'string' ? BARRIER_BY_NAME[document.barrier] : undefined;
      if (barrier !== undefined) this.#barrier.push({ barrier, at: this.options.clock.now(), source: 'state' });
      return;
    }
    const context = document.context;
    const requestId =
      typeof context === 'object' && context !== null ? (context as Record<string, unknown>).request_id : undefined;
    const pending = typeof requestId === 'string' ? this.#pending.get(requestId) : undefined;
    if (pending === undefined) {
      this.strayResponses++;
      return;
    }
    pending.resolve(document);
  }
}
