// The gateway: bridges boxes on serial ports and BLE to MQTT (docs/architecture.md, Wires).
// For every box it reaches it subscribes to the box's command topic, relays
// each command over the box's link, matches the response (with a timeout),
// and publishes the response with `via` and the command's context, the
// box's state (retained) and availability; and its own availability (last
// will) and state. A command the box does not answer in time gives a
// published timeout record, not silence.
//
// Nothing the gateway relies on lives only in its memory (docs/architecture.md,
// Delivery guarantees): a command is written to the queue's file before it
// goes on a link, and its response record is on disk, in the write that
// lets the command go, before it is published and before the box is sent
// its next command. A gateway killed in between finds the command at its
// next start: an answer that comes after it opened the link is matched to
// it and published; a command no answer comes for within --answer-ms gets
// its timeout record, so the service hears of every command the gateway
// took. An answer the box sent while no gateway ran is gone: opening the
// serial port discards what waits on it (node-serialport does at every
// open; a real port receives nothing while closed), and the box protocol
// has no retransmission to ask for it again.
//
// With a capture, every link is recorded as it crosses the gateway
// (docs/capture.md): the serial bytes both ways, the BLE chunks and their
// frames, the command and response messages and the frames inside them.
// The gateway holds no key: it records no opened record.
import type { Clock, TimerHandle } from '../lib/clock.js';
import { silentLogger, type Logger } from '../lib/logger.js';
import {
  parseCommandMessage,
  type CommandMessage,
  type MessageError,
  type ResponseMessage,
  type Via,
} from '../lib/mqtt-messages.js';
import type { Topics } from '../lib/mqtt-topics.js';
import { ResilientMqttClient } from '../lib/resilient-mqtt.js';
import type { SerialTarget } from '../lib/serial-target.js';
import { MAX_COMMAND_LENGTH, bleLocalName, parseResponse, type ResponseFields } from '../firmware-protocol/index.js';
import { BleCentral } from '../lib/ble-central.js';
import type { Noble } from '../lib/noble.js';
import { stateFromResponse } from './box-state.js';
import { expectedEcho, type WaitOutcome } from '../lib/response-waiter.js';
import { MemoryGatewayQueue, type GatewayQueue, type TakenCommand } from './command-journal.js';
import { SerialBoxLink } from '../lib/serial-box-link.js';
import { CaptureDirection, LinkCapture } from '../lib/capture/link-capture.js';
import { brokerName, recordMqttMessage, recordMqttMessageWithFrame } from '../lib/capture/mqtt-capture.js';
import type { CaptureSink } from '../lib/capture/sink.js';
import type { CaptureLinkName } from '../lib/capture/record.js';

export interface GatewayOptions {
  readonly mqtt: { readonly url: string; readonly username: string; readonly password: string };
  readonly topics: Topics;
  readonly clock: Clock;
  readonly serial: readonly SerialTarget[];
  /** BLE through this noble (loaded lazily by the caller), with an optional allow-list. */
  readonly ble?: { readonly noble: Noble; readonly allow: readonly string[]; readonly idleMs?: number };
  /** How long a box may take to answer, ms. */
  readonly answerTimeoutMs: number;
  /** Where responses wait for the broker's PUBACK (while it is away, too)
   * and the commands taken wait for their answer; in memory by default. */
  readonly queue?: GatewayQueue;
  readonly logger?: Logger;
  /** Records every link: `serial:<path>`, `ble:PB-<module_id>`, `mqtt:<broker URL>`. */
  readonly capture?: CaptureSink;
}

/** The interface description of every link the gateway records. */
export const GATEWAY_CAPTURE_DESCRIPTION = 'parkbench gateway';

export interface GatewayCounters {
  commands: number;
  responses: number;
  timeouts: number;
  linkDown: number;
  /** Command messages that were not a command (bad JSON, no base64 command,
   * bytes longer than any command: docs/protocol.md, Sizes). */
  badMessages: number;
}

interface Route {
  readonly via: Exclude<Via, 'mqtt'>;
  send(command: Buffer, timeoutMs: number): Promise<WaitOutcome>;
}

/** The gateway's state is published at most this often, ms. */
const STATE_INTERVAL_MS = 1_000;

export class Gateway {
  readonly counters: GatewayCounters = { commands: 0, responses: 0, timeouts: 0, linkDown: 0, badMessages: 0 };
  readonly id: string;
  readonly #mqtt: ResilientMqttClient;
  readonly #serialLinks: SerialBoxLink[];
  readonly #ble: BleCentral | undefined;
  readonly #routes = new Map<number, Route>();
  readonly #logger: Logger;
  readonly #queue: GatewayQueue;
  readonly #mqttCapture: LinkCapture | undefined;
  /** Per box, the turn of its last command: the next goes on the link once
   * that one's record is on disk. */
  readonly #turns = new Map<number, Promise<void>>();
  /** Commands a previous run took and never answered, by journal id: a late
   * answer on a link settles one, the rest get timeout records. */
  readonly #late = new Map<number, TakenCommand>();
  #lateTimer: TimerHandle | undefined;
  #stateTimer: TimerHandle | undefined;

  constructor(private readonly options: GatewayOptions) {
    this.id = options.mqtt.username;
    this.#logger = (options.logger ?? silentLogger).child({ component: 'gateway', gateway_id: this.id });
    const { topics, clock } = options;
    this.#queue = options.queue ?? new MemoryGatewayQueue();
    for (const { id, command } of this.#queue.recovered()) this.#late.set(id, command);
    this.#mqtt = new ResilientMqttClient({
      url: options.mqtt.url,
      username: options.mqtt.username,
      password: options.mqtt.password,
      clientId: `${this.id}-${process.pid}`,
      clock,
      will: { topic: topics.gateway(this.id, 'availability'), payload: 'offline' },
      logger: this.#logger,
      queue: this.#queue,
    });
    this.#mqttCapture = this.#linkCapture('mqtt', brokerName(options.mqtt.url));
    this.#mqtt.on('connect', () => this.#connected());
    this.#mqtt.on('message', (topic, payload) => this.#message(topic, payload));
    this.#serialLinks = options.serial.map((target) => this.#serialLink(target));
    this.#ble = options.ble === undefined ? undefined : this.#bleCentral(options.ble);
  }

  /** Module ids of the boxes reached, with how. */
  get boxes(): { moduleId: number; via: Route['via'] }[] {
    return [...this.#routes].map(([moduleId, route]) => ({ moduleId, via: route.via }));
  }

  get connected(): boolean {
    return this.#mqtt.connected;
  }

  get queued(): number {
    return this.#mqtt.queued;
  }

  /** Bad frames seen on every link (bad CRC or COBS, oversize, chunks out of order, unmatched). */
  get badFrames(): number {
    return (
      this.#serialLinks.reduce(
        (sum, link) => sum + link.badFrames + link.counters.unmatched + link.counters.unexpectedFrames,
        0,
      ) + (this.#ble?.counters.badFrames ?? 0)
    );
  }

  /** Connects to the broker (resolves on the first connection; rejects if
   * the broker refuses the credentials), then opens the links. */
  async start(): Promise<void> {
    await this.#mqtt.start();
    if (this.#late.size > 0) {
      this.#logger.warn(
        { commands: this.#late.size },
        'commands of the previous run unanswered: waiting for their answers',
      );
      this.#lateTimer = this.options.clock.setTimeout(() => this.#lateUnanswered(), this.options.answerTimeoutMs);
    }
    await Promise.all(this.#serialLinks.map((link) => link.start()));
    await this.#ble?.start();
    this.#logger.info(
      { serial: this.#serialLinks.map((link) => link.path), ble: this.#ble !== undefined },
      'gateway started',
    );
  }

  async stop(): Promise<void> {
    if (this.#stateTimer !== undefined) this.options.clock.clearTimeout(this.#stateTimer);
    if (this.#lateTimer !== undefined) this.options.clock.clearTimeout(this.#lateTimer);
    await Promise.all(this.#serialLinks.map((link) => link.stop()));
    await this.#ble?.stop();
    const { topics } = this.options;
    for (const moduleId of this.#routes.keys())
      this.#mqtt.publish(topics.box(moduleId, 'availability'), 'offline', { retain: true, queue: false });
    await this.#mqtt.publishAndWait(topics.gateway(this.id, 'availability'), 'offline', { retain: true });
    await this.#mqtt.stop();
  }

  /** The capture of one link, when the gateway records. */
  #linkCapture(link: CaptureLinkName, name: string): LinkCapture | undefined {
    const sink = this.options.capture;
    if (sink === undefined) return undefined;
    return new LinkCapture(sink, link, name, { description: GATEWAY_CAPTURE_DESCRIPTION });
  }

  #serialLink(target: SerialTarget): SerialBoxLink {
    const capture = this.#linkCapture('serial', target.path);
    const link = new SerialBoxLink({
      target,
      clock: this.options.clock,
      logger: this.#logger,
      claimUnmatched: (response) => this.#claimLate(response),
      ...(capture === undefined ? {} : { capture }),
    });
    link.on('report', (report) => {
      this.#reached(report.moduleId, { via: 'serial', send: (command, timeoutMs) => link.send(command, timeoutMs) });
      this.#publishBoxState(report);
    });
    link.on('down', () => {
      if (link.moduleId !== undefined) this.#availability(link.moduleId, 'offline');
      this.#scheduleState();
    });
    return link;
  }

  #bleCentral(settings: NonNullable<GatewayOptions['ble']>): BleCentral {
    const central = new BleCentral({
      noble: settings.noble,
      clock: this.options.clock,
      logger: this.#logger,
      allow: settings.allow,
      ...(settings.idleMs === undefined ? {} : { idleMs: settings.idleMs }),
      ...(this.options.capture === undefined
        ? {}
        : { capture: (moduleId: number) => this.#linkCapture('ble', bleLocalName(moduleId)) }),
    });
    central.on('discovered', (moduleId) =>
      this.#reached(moduleId, { via: 'ble', send: (command, timeoutMs) => central.send(moduleId, command, timeoutMs) }),
    );
    central.on('report', (_moduleId, frame) => this.#publishBoxState(parseResponse(frame)));
    return central;
  }

  /** A box was reached (again) on a link: route its commands there. */
  #reached(moduleId: number, route: Route): void {
    const known = this.#routes.get(moduleId);
    this.#routes.set(moduleId, route);
    if (known === undefined || known.via !== route.via) {
      this.#logger.info({ module_id: moduleId, via: route.via }, 'box reached');
      this.#mqtt.addSubscription(this.options.topics.box(moduleId, 'command'));
      // The state (which boxes this gateway reaches) goes before the box's
      // `online`: the API ties the box to this gateway's availability by it
      // (api/mqtt/box-availability.ts), so a gateway dying right after cannot
      // leave the box's retained `online` believed.
      this.#publishState();
    }
    this.#availability(moduleId, 'online');
    this.#scheduleState();
  }

  #connected(): void {
    const { topics } = this.options;
    this.#mqtt.publish(topics.gateway(this.id, 'availability'), 'online', { retain: true, queue: false });
    // Which boxes it reaches before they are said online (see #reached).
    if (this.#routes.size > 0) this.#publishState();
    for (const moduleId of this.#routes.keys()) this.#availability(moduleId, 'online');
    this.#scheduleState();
  }

  #message(topic: string, payload: Buffer): void {
    const parsed = this.options.topics.parseBoxTopic(topic);
    if (parsed?.name !== 'command') return;
    if (this.#mqttCapture !== undefined)
      recordMqttMessage(this.#mqttCapture, CaptureDirection.toBox, topic, payload, parsed.moduleId);
    const route = this.#routes.get(parsed.moduleId);
    if (route === undefined) return;
    let command: ReturnType<typeof parseCommandMessage>;
    try {
      command = parseCommandMessage(payload);
    } catch (error) {
      // No bytes to relay (docs/architecture.md, MQTT topics): counted and dropped.
      this.counters.badMessages++;
      this.#logger.warn(
        { module_id: parsed.moduleId, reason: (error as MessageError).message },
        'command message dropped',
      );
      this.#scheduleState();
      return;
    }
    if (command.frame.length > MAX_COMMAND_LENGTH) {
      // docs/protocol.md, Sizes: no command is longer; the link would drop it as bad
      // framing (serial cannot even frame it), so it is no command: counted and dropped.
      this.counters.badMessages++;
      this.#logger.warn(
        { module_id: parsed.moduleId, bytes: command.frame.length, max: MAX_COMMAND_LENGTH },
        'command message dropped: longer than any command',
      );
      this.#scheduleState();
      return;
    }
    this.counters.commands++;
    this.#relay(parsed.moduleId, route, command.frame, command.message);
  }

  /** Keeps the command, relays it once it is on disk and the box's previous
   * command is answered on disk, and queues its record. */
  #relay(moduleId: number, route: Route, frame: Buffer, message: CommandMessage): void {
    const context = message.context ?? {};
    const taken = this.#queue.take({ module_id: moduleId, via: route.via, command: message.command, context });
    const turn = Promise.all([this.#turns.get(moduleId), taken.durable])
      .then(() => route.send(frame, this.options.answerTimeoutMs))
      .catch((): WaitOutcome => ({ error: 'link_down' }))
      .then((outcome) => this.#answered(moduleId, route.via, message.command, context, outcome, taken.id));
    this.#turns.set(moduleId, turn);
  }

  /** A response on a link that answers no command sent in this run: the
   * answer to a command of the previous run, if it matches one (its box,
   * kind and key_id). */
  #claimLate(response: Buffer): boolean {
    if (this.#late.size === 0) return false;
    let fields: ResponseFields;
    try {
      fields = parseResponse(response);
    } catch {
      return false;
    }
    for (const [id, taken] of this.#late) {
      const echo = expectedEcho(Buffer.from(taken.command, 'base64'));
      if (taken.module_id !== fields.moduleId || echo.kind !== fields.kind || echo.keyId !== fields.keyId) continue;
      this.#late.delete(id);
      this.#logger.info({ module_id: taken.module_id }, 'answer to a command of the previous run');
      void this.#answered(taken.module_id, taken.via, taken.command, taken.context, { response }, id);
      return true;
    }
    return false;
  }

  /** No answer came in time for these commands of the previous run. */
  #lateUnanswered(): void {
    this.#lateTimer = undefined;
    for (const [id, taken] of this.#late)
      void this.#answered(taken.module_id, taken.via, taken.command, taken.context, { error: 'timeout' }, id);
    this.#late.clear();
  }

  /** Queues the command's record and lets the command go from the journal in
   * the same write; resolves once that write is on disk. */
  #answered(
    moduleId: number,
    via: Route['via'],
    command: string,
    context: ResponseMessage['context'],
    outcome: WaitOutcome,
    takenId: number,
  ): Promise<void> {
    const receivedAt = new Date(this.options.clock.now());
    let message: ResponseMessage;
    if ('response' in outcome) {
      this.counters.responses++;
      message = {
        command,
        response: outcome.response.toString('base64'),
        received_at: receivedAt.toISOString(),
        via,
        context,
      };
    } else {
      if (outcome.error === 'timeout') this.counters.timeouts++;
      else this.counters.linkDown++;
      message = { command, response: null, received_at: receivedAt.toISOString(), via, context, error: outcome.error };
    }
    const topic = this.options.topics.box(moduleId, 'response');
    const payload = JSON.stringify(message);
    const written = this.#mqtt.enqueue(topic, payload);
    if (this.#mqttCapture !== undefined) {
      const frame = 'response' in outcome ? outcome.response : undefined;
      recordMqttMessageWithFrame(
        this.#mqttCapture,
        CaptureDirection.fromBox,
        topic,
        Buffer.from(payload),
        frame,
        moduleId,
      );
    }
    this.#queue.settle(takenId);
    this.#scheduleState();
    if (!('response' in outcome)) return written;
    // The state it shows (box_seq among it) is published once the response is kept too.
    const response = outcome.response;
    return written.then(() => this.#publishBoxState(parseResponse(response)));
  }

  #publishBoxState(fields: ResponseFields): void {
    const state = stateFromResponse(fields, new Date(this.options.clock.now()));
    this.#mqtt.publish(this.options.topics.box(fields.moduleId, 'state'), JSON.stringify(state), {
      retain: true,
      queue: false,
    });
  }

  #availability(moduleId: number, availability: 'online' | 'offline'): void {
    this.#mqtt.publish(this.options.topics.box(moduleId, 'availability'), availability, { retain: true, queue: false });
  }

  /** Publishes the gateway's state soon, at most once a second. */
  #scheduleState(): void {
    if (this.#stateTimer !== undefined) return;
    this.#stateTimer = this.options.clock.setTimeout(() => {
      this.#stateTimer = undefined;
      this.#publishState();
    }, STATE_INTERVAL_MS);
  }

  #publishState(): void {
    this.#mqtt.publish(this.options.topics.gateway(this.id, 'state'), JSON.stringify(this.snapshot()), {
      retain: true,
      queue: false,
    });
  }

  /** The gateway's state message: its links, the boxes it reaches, its counters. */
  snapshot(): object {
    return {
      links: [
        ...this.#serialLinks.map((link) => ({
          type: 'serial',
          path: link.path,
          open: link.isOpen,
          module_id: link.moduleId ?? null,
          bad_frames: link.badFrames,
        })),
        ...(this.#ble === undefined
          ? []
          : [
              {
                type: 'ble',
                boxes: this.#ble.boxes,
                bad_frames: this.#ble.counters.badFrames,
                connects: this.#ble.counters.connects,
              },
            ]),
      ],
      boxes: this.boxes.map((box) => ({ module_id: box.moduleId, via: box.via })),
      counters: {
        commands: this.counters.commands,
        responses: this.counters.responses,
        timeouts: this.counters.timeouts,
        link_down: this.counters.linkDown,
        bad_messages: this.counters.badMessages,
        bad_frames: this.badFrames,
        queued: this.queued,
        refused_publishes: this.#mqtt.counters.refusedPublishes,
      },
      updated_at: new Date(this.options.clock.now()).toISOString(),
    };
  }
}
