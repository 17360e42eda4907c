// What a link records, in the words of the link: the serial side's wire
// bytes, a BLE chunk, an MQTT message, the frame they carry, and the frame
// opened by a tool that holds the box's keys.
import {
  CaptureDirection,
  CaptureLink,
  RecordKind,
  mqttMessageData,
  type CaptureLinkName,
  type CaptureRecord,
} from './record.js';
import { processMicros, type CaptureInterface, type CaptureSink } from './sink.js';

export { CaptureDirection };

export class LinkCapture {
  readonly #sink: CaptureSink;
  readonly #interface: CaptureInterface;
  readonly #link: CaptureLink;
  readonly #nowMicros: () => bigint;

  /** `name` is what follows `link:` in the interface name: a port's path,
   * a box's BLE name, a broker's URL. */
  constructor(
    sink: CaptureSink,
    link: CaptureLinkName,
    name: string,
    options: { readonly description?: string; readonly nowMicros?: () => bigint } = {},
  ) {
    this.#sink = sink;
    this.#link = CaptureLink[link];
    this.#interface = {
      name: `${link}:${name}`,
      ...(options.description === undefined ? {} : { description: options.description }),
    };
    this.#nowMicros = options.nowMicros ?? processMicros;
  }

  get interfaceName(): string {
    return this.#interface.name;
  }

  /** Serial: one run of bytes up to and with its 0x00 (or what was left
   * when the link closed), marked when it made no frame. */
  wire(direction: CaptureDirection, bytes: Uint8Array, options: { moduleId?: number; notAFrame?: boolean } = {}): void {
    this.#record(direction, RecordKind.wire, bytes, options.moduleId, options.notAFrame);
  }

  /** BLE: one chunk, its header byte included, marked when the reassembly
   * dropped it as it arrived. */
  chunk(
    direction: CaptureDirection,
    bytes: Uint8Array,
    options: { moduleId?: number; notAFrame?: boolean } = {},
  ): void {
    this.#record(direction, RecordKind.chunk, bytes, options.moduleId, options.notAFrame);
  }

  /** MQTT: one message, on its topic, as published. */
  message(direction: CaptureDirection, topic: string, payload: Uint8Array, moduleId?: number): void {
    this.#record(direction, RecordKind.message, mqttMessageData(topic, payload), moduleId);
  }

  /** A protocol frame: a command or a response. */
  frame(direction: CaptureDirection, frame: Uint8Array, moduleId?: number): void {
    this.#record(direction, RecordKind.frame, frame, moduleId);
  }

  /** The opened record of the frame before it (opened.ts makes its data). */
  opened(direction: CaptureDirection, data: Uint8Array, moduleId?: number): void {
    this.#record(direction, RecordKind.opened, data, moduleId);
  }

  #record(
    direction: CaptureDirection,
    kind: RecordKind,
    data: Uint8Array,
    moduleId: number | undefined,
    notAFrame = false,
  ): void {
    const record: CaptureRecord = { link: this.#link, direction, kind, moduleId, notAFrame, data };
    this.#sink.record(this.#interface, this.#nowMicros(), record);
  }
}
