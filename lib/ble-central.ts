// The gateway's BLE side: noble scans for boxes advertising `PB-<module_id>`
// and the box service (docs/protocol.md, BLE link), connects on demand, writes a
// command in chunks, collects the notified response through reassembly, and
// disconnects when idle. A failed connection is dropped and made again on the
// next command. With a capture, each chunk written and notified is recorded,
// and after a frame's chunks the frame (docs/capture.md).
import { EventEmitter } from 'node:events';
import type { Clock, TimerHandle } from './clock.js';
import { silentLogger, type Logger } from './logger.js';
import {
  BleReassembler,
  BleUuid,
  MIN_BLE_MTU,
  chunkFrame,
  parseResponse,
  RESPONSE_LENGTH,
} from '../firmware-protocol/index.js';
import { isStatusReport, ResponseWaiter, type WaitOutcome } from './response-waiter.js';
import { waitPoweredOn, type Characteristic, type Noble, type Peripheral } from './noble.js';
import { messageOf } from './message-of.js';
import { CaptureDirection, type LinkCapture } from './capture/link-capture.js';

const LOCAL_NAME = /^PB-(\d{1,10})$/;
const uuid = (value: string): string => value.replaceAll('-', '').toLowerCase();

export interface BleCentralOptions {
  readonly noble: Noble;
  readonly clock: Clock;
  readonly logger?: Logger;
  /** MAC addresses allowed, where the platform shows them; empty: any box. */
  readonly allow?: readonly string[];
  /** Disconnect from a box after this long without a command, ms. */
  readonly idleMs?: number;
  /** Longest wait for a connection and its discovery, ms. */
  readonly connectTimeoutMs?: number;
  /** Longest wait for the radio to power on, ms. */
  readonly powerOnTimeoutMs?: number;
  /** The capture of a box's link, asked once when the box is discovered
   * (the caller makes its interface: `ble:PB-<module_id>`); undefined: none. */
  readonly capture?: (moduleId: number) => LinkCapture | undefined;
}

export interface BleCentralCounters {
  connects: number;
  connectFailures: number;
  /** Chunks out of order or oversize, frames that are no response. */
  badFrames: number;
}

export interface BleCentralEvents {
  /** A box was seen for the first time. */
  discovered: [moduleId: number];
  /** A status report from a connected box. */
  report: [moduleId: number, frame: Buffer];
  /** The link to a box went down (it will be made again on demand). */
  disconnected: [moduleId: number];
}

interface Connection {
  readonly command: Characteristic;
  readonly mtu: number;
  readonly waiter: ResponseWaiter;
  readonly reassembler: BleReassembler;
  idleTimer?: TimerHandle;
}

interface KnownBox {
  readonly peripheral: Peripheral;
  readonly capture: LinkCapture | undefined;
  connection?: Promise<Connection>;
  /** Commands to one box are written one at a time: chunks must not interleave. */
  queue: Promise<unknown>;
}

export class BleCentral extends EventEmitter<BleCentralEvents> {
  readonly counters: BleCentralCounters = { connects: 0, connectFailures: 0, badFrames: 0 };
  readonly #boxes = new Map<number, KnownBox>();
  readonly #logger: Logger;
  readonly #allow: Set<string>;
  readonly #onDiscover = (peripheral: Peripheral): void => this.#discovered(peripheral);

  constructor(private readonly options: BleCentralOptions) {
    super();
    this.#logger = (options.logger ?? silentLogger).child({ component: 'gateway:ble' });
    this.#allow = new Set((options.allow ?? []).map((mac) => mac.toUpperCase()));
  }

  /** Module ids of the boxes seen so far. */
  get boxes(): number[] {
    return [...this.#boxes.keys()];
  }

  async start(): Promise<void> {
    const { noble } = this.options;
    await waitPoweredOn(noble, this.options.clock, this.options.powerOnTimeoutMs ?? 10_000);
    noble.on('discover', this.#onDiscover);
    await noble.startScanningAsync([uuid(BleUuid.service)], true);
    this.#logger.info({}, 'scanning for boxes');
  }

  async stop(): Promise<void> {
    const { noble } = this.options;
    noble.removeListener('discover', this.#onDiscover);
    await noble.stopScanningAsync().catch(() => undefined);
    await Promise.all([...this.#boxes.keys()].map((moduleId) => this.#disconnect(moduleId)));
  }

  /** Sends a command to a box and waits for its response. */
  send(moduleId: number, command: Buffer, timeoutMs: number): Promise<WaitOutcome> {
    const box = this.#boxes.get(moduleId);
    if (box === undefined) return Promise.resolve({ error: 'link_down' });
    const result = box.queue.then(() => this.#exchange(moduleId, box, command, timeoutMs));
    box.queue = result.catch(() => undefined);
    return result;
  }

  /** Writes raw chunks to a box's command characteristic, in turn with the
   * commands, connecting if needed (the conformance suite's garbage: each is
   * recorded as not a frame). False when the box cannot be reached. */
  writeRaw(moduleId: number, chunks: readonly Buffer[]): Promise<boolean> {
    const box = this.#boxes.get(moduleId);
    if (box === undefined) return Promise.resolve(false);
    const result = box.queue.then(async () => {
      try {
        const connection = await this.#connection(moduleId, box);
        for (const chunk of chunks) {
          box.capture?.chunk(CaptureDirection.toBox, chunk, { moduleId, notAFrame: true });
          await connection.command.writeAsync(chunk, false);
        }
        return true;
      } catch (error) {
        this.#logger.warn({ module_id: moduleId, err: messageOf(error) }, 'raw write failed');
        return false;
      }
    });
    box.queue = result.catch(() => undefined);
    return result;
  }

  async #exchange(moduleId: number, box: KnownBox, command: Buffer, timeoutMs: number): Promise<WaitOutcome> {
    let connection: Connection;
    try {
      connection = await this.#connection(moduleId, box);
    } catch (error) {
      this.counters.connectFailures++;
      this.#logger.warn({ module_id: moduleId, err: messageOf(error) }, 'cannot connect');
      return { error: 'link_down' };
    }
    if (connection.idleTimer !== undefined) this.options.clock.clearTimeout(connection.idleTimer);
    const answer = connection.waiter.expect(command, timeoutMs);
    try {
      const chunks = chunkFrame(command, connection.mtu);
      for (const [index, chunk] of chunks.entries()) {
        // Recorded before it is written: the answer may be notified before the write returns.
        box.capture?.chunk(CaptureDirection.toBox, chunk, { moduleId });
        if (index === chunks.length - 1) box.capture?.frame(CaptureDirection.toBox, command, moduleId);
        await connection.command.writeAsync(chunk, false);
      }
    } catch (error) {
      this.#logger.warn({ module_id: moduleId, err: messageOf(error) }, 'write failed');
      connection.waiter.failAll();
    }
    const outcome = await answer;
    connection.idleTimer = this.options.clock.setTimeout(
      () => void this.#disconnect(moduleId),
      this.options.idleMs ?? 30_000,
    );
    return outcome;
  }

  #connection(moduleId: number, box: KnownBox): Promise<Connection> {
    box.connection ??= this.#connect(moduleId, box.peripheral).catch((error: unknown) => {
      box.connection = undefined;
      throw error;
    });
    return box.connection;
  }

  async #connect(moduleId: number, peripheral: Peripheral): Promise<Connection> {
    const { clock } = this.options;
    const timeoutMs = this.options.connectTimeoutMs ?? 10_000;
    let timer: TimerHandle | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = clock.setTimeout(() => reject(new Error(`no connection within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      const setup = (async () => {
        await peripheral.connectAsync();
        const { characteristics } = await peripheral.discoverSomeServicesAndCharacteristicsAsync(
          [uuid(BleUuid.service)],
          [uuid(BleUuid.command), uuid(BleUuid.response)],
        );
        const command = characteristics.find((characteristic) => characteristic.uuid === uuid(BleUuid.command));
        const response = characteristics.find((characteristic) => characteristic.uuid === uuid(BleUuid.response));
        if (command === undefined || response === undefined)
          throw new Error('the box service lacks its command or response characteristic');
        const connection: Connection = {
          command,
          // An ATT MTU is at least 23 (docs/protocol.md, BLE link); a smaller value is the platform's mistake.
          mtu: Math.max(peripheral.mtu ?? MIN_BLE_MTU, MIN_BLE_MTU),
          waiter: new ResponseWaiter(clock),
          reassembler: new BleReassembler(RESPONSE_LENGTH),
        };
        const capture = this.#boxes.get(moduleId)?.capture;
        response.on('data', (data: Buffer) => this.#chunk(moduleId, connection, data, capture));
        await response.subscribeAsync();
        return connection;
      })();
      const connection = await Promise.race([setup, deadline]);
      this.counters.connects++;
      peripheral.once('disconnect', () => this.#lost(moduleId, connection));
      this.#logger.info({ module_id: moduleId, mtu: connection.mtu }, 'connected');
      return connection;
    } catch (error) {
      peripheral.disconnect();
      throw error;
    } finally {
      if (timer !== undefined) clock.clearTimeout(timer);
    }
  }

  #chunk(moduleId: number, connection: Connection, data: Buffer, capture: LinkCapture | undefined): void {
    const { counters } = connection.reassembler;
    const before = counters.counterErrors + counters.oversize;
    const droppedBefore = counters.droppedChunks;
    const frame = connection.reassembler.push(data);
    capture?.chunk(CaptureDirection.fromBox, data, { moduleId, notAFrame: counters.droppedChunks > droppedBefore });
    this.counters.badFrames += counters.counterErrors + counters.oversize - before;
    if (frame === null) return;
    capture?.frame(CaptureDirection.fromBox, frame, moduleId);
    let report: boolean;
    try {
      report = isStatusReport(parseResponse(frame));
    } catch {
      this.counters.badFrames++;
      return;
    }
    if (report) this.emit('report', moduleId, frame);
    else if (!connection.waiter.offer(frame)) this.counters.badFrames++;
  }

  #lost(moduleId: number, connection: Connection): void {
    const box = this.#boxes.get(moduleId);
    if (box !== undefined) box.connection = undefined;
    if (connection.idleTimer !== undefined) this.options.clock.clearTimeout(connection.idleTimer);
    connection.waiter.failAll();
    this.#logger.info({ module_id: moduleId }, 'disconnected');
    this.emit('disconnected', moduleId);
  }

  async #disconnect(moduleId: number): Promise<void> {
    const box = this.#boxes.get(moduleId);
    if (box?.connection === undefined) return;
    const connection = await box.connection.catch(() => undefined);
    if (connection === undefined) return;
    await box.peripheral.disconnectAsync().catch(() => undefined);
  }

  #discovered(peripheral: Peripheral): void {
    // noble types `localName` and `address` as strings, but its HCI binding
    // leaves `localName` undefined when a peripheral advertises no name, and
    // the address is whatever the binding passed: both are checked.
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- see above
    const match = LOCAL_NAME.exec(peripheral.advertisement.localName ?? '');
    if (match?.[1] === undefined) return;
    const moduleId = Number(match[1]);
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- see above
    const address = (peripheral.address ?? '').toUpperCase();
    // The allow-list applies where the platform shows addresses (docs/protocol.md, BLE link).
    if (this.#allow.size > 0 && address !== '' && address !== 'UNKNOWN' && !this.#allow.has(address)) return;
    if (this.#boxes.has(moduleId)) return;
    this.#boxes.set(moduleId, { peripheral, capture: this.options.capture?.(moduleId), queue: Promise.resolve() });
    this.#logger.info({ module_id: moduleId, address }, 'box discovered');
    this.emit('discovered', moduleId);
  }
}
