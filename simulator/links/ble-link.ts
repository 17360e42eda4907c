// A simulated box as a BLE peripheral (docs/protocol.md, BLE link): it advertises
// `PB-<module_id>` and the box service at its MAC address; commands arrive
// in chunks on the command characteristic (write with response), responses
// and status reports leave in chunks as notifications on the response
// characteristic. With a capture, each chunk both ways is recorded on the
// box's side, then the frame after its chunks and the frame's opened record.
import { BleReassembler, BleUuid, bleLocalName, chunkFrame } from '../../firmware-protocol/index.js';
import { silentLogger, type Logger } from '../../lib/logger.js';
import {
  nobleUuid,
  type CentralConnection,
  type GattCharacteristic,
  type VirtualPeripheral,
} from '../ble/virtual-radio.js';
import type { BarrierState } from '../barrier.js';
import type { SimulatedBox } from '../simulated-box.js';
import { messageOf } from '../../lib/message-of.js';
import { CaptureDirection } from '../../lib/capture/link-capture.js';
import type { BoxCapture } from './box-capture.js';

/** The smallest ATT MTU every BLE stack supports. */
export const DEFAULT_BLE_MTU = 23;

export interface BoxBleCounters {
  commands: number;
  /** Chunks out of order, oversize or empty: partial frames dropped. */
  badChunks: number;
  /** Writes to a characteristic other than the command one. */
  strayWrites: number;
}

const COMMAND = nobleUuid(BleUuid.command);

export class BoxBlePeripheral implements VirtualPeripheral {
  readonly address: string;
  readonly localName: string;
  readonly serviceUuid = BleUuid.service;
  readonly characteristics: readonly GattCharacteristic[] = [
    { uuid: BleUuid.command, properties: ['write'] },
    { uuid: BleUuid.response, properties: ['notify'] },
  ];
  readonly counters: BoxBleCounters = { commands: 0, badChunks: 0, strayWrites: 0 };
  readonly #connections = new Map<CentralConnection, BleReassembler>();
  readonly #logger: Logger;
  #lastBarrier: BarrierState;
  readonly #onChange = (): void => this.#barrierMaybeChanged();

  constructor(
    readonly box: SimulatedBox,
    readonly mtu: number = DEFAULT_BLE_MTU,
    logger: Logger = silentLogger,
    /** Records this box's link (interface `ble:PB-<module_id>`). */
    private readonly capture?: BoxCapture,
  ) {
    this.address = box.provisioning.macAddress;
    this.localName = bleLocalName(box.moduleId);
    this.#logger = logger.child({ component: 'sim:ble', module_id: box.moduleId });
    this.#lastBarrier = box.barrier.state;
    box.on('change', this.#onChange);
  }

  /** Stops reporting barrier changes (the box is shutting down). */
  detach(): void {
    this.box.off('change', this.#onChange);
  }

  connected(connection: CentralConnection): void {
    this.#connections.set(connection, new BleReassembler());
    this.#logger.info({ mtu: connection.mtu }, 'central connected');
  }

  disconnected(connection: CentralConnection): void {
    this.#connections.delete(connection);
    this.#logger.info({}, 'central disconnected');
  }

  written(connection: CentralConnection, characteristicUuid: string, data: Buffer): void {
    const reassembler = this.#connections.get(connection);
    if (reassembler === undefined) return;
    if (characteristicUuid !== COMMAND) {
      this.counters.strayWrites++;
      return;
    }
    const moduleId = this.box.moduleId;
    const before = badChunkCount(reassembler);
    const droppedBefore = reassembler.counters.droppedChunks;
    const frame = reassembler.push(data);
    this.capture?.link.chunk(CaptureDirection.toBox, data, {
      moduleId,
      notAFrame: reassembler.counters.droppedChunks > droppedBefore,
    });
    this.counters.badChunks += badChunkCount(reassembler) - before;
    if (frame === null) return;
    this.capture?.link.frame(CaptureDirection.toBox, frame, moduleId);
    this.capture?.openedCommand(frame);
    this.counters.commands++;
    this.box.handleCommand(frame).then(
      (response) => {
        if (response !== null) this.#send(connection, response, frame);
      },
      (error: unknown) => this.#logger.error({ err: messageOf(error) }, 'command could not be answered'),
    );
  }

  #barrierMaybeChanged(): void {
    const barrier = this.box.barrier.state;
    if (barrier === this.#lastBarrier) return;
    this.#lastBarrier = barrier;
    // Reports cost a box_seq each: made only when a central is there to hear them.
    if (this.#connections.size === 0) return;
    this.box.statusReport().then(
      (report) => {
        for (const connection of this.#connections.keys()) this.#send(connection, report, null);
      },
      (error: unknown) => this.#logger.error({ err: messageOf(error) }, 'status report failed'),
    );
  }

  /** Notifies a response (to `command`) or a status report (null) in chunks. */
  #send(connection: CentralConnection, frame: Buffer, command: Buffer | null): void {
    const moduleId = this.box.moduleId;
    for (const chunk of chunkFrame(frame, connection.mtu)) {
      this.capture?.link.chunk(CaptureDirection.fromBox, chunk, { moduleId });
      connection.notify(BleUuid.response, chunk);
    }
    this.capture?.link.frame(CaptureDirection.fromBox, frame, moduleId);
    this.capture?.openedResponse(frame, command);
  }
}

function badChunkCount(reassembler: BleReassembler): number {
  const { counterErrors, oversize, emptyChunks } = reassembler.counters;
  return counterErrors + oversize + emptyChunks;
}
