// A running simulation: one box or a fleet, each box with the links it was
// given (docs/protocol.md, Serial link framing and BLE link; docs/architecture.md, Access: `--serial` alone means serial
// only, MQTT when asked for or when no link is named), its state file, its
// faults. What `parkbench sim` runs, and what tests and benchmarks start in
// process.
import { mkdir } from 'node:fs/promises';
import type { Clock } from '../lib/clock.js';
import { silentLogger, type Logger } from '../lib/logger.js';
import type { Topics } from '../lib/mqtt-topics.js';
import type { SerialTarget } from '../lib/serial-target.js';
import type { BarrierTimings } from './barrier.js';
import { serveNobleWebSocket, type WebSocketRadioServer } from './ble/websocket-radio.js';
import { VirtualRadio } from './ble/virtual-radio.js';
import type { FleetMember } from './fleet-file.js';
import type { FirmwareBug } from './firmware-bug-names.js';
import { BoxBlePeripheral } from './links/ble-link.js';
import { BoxMqttLink } from './links/mqtt-link.js';
import { BoxSerialLink } from './links/serial-link.js';
import { SimulatedBox } from './simulated-box.js';
import { boxStateFileOf } from './state-file.js';
import type { SimSetCommand } from '../lib/sim-set.js';
import { messageOf } from '../lib/message-of.js';
import { bleLocalName } from '../firmware-protocol/index.js';
import { LinkCapture } from '../lib/capture/link-capture.js';
import { brokerName } from '../lib/capture/mqtt-capture.js';
import type { CaptureSink } from '../lib/capture/sink.js';
import type { CaptureLinkName } from '../lib/capture/record.js';
import { BoxCapture, SIM_CAPTURE_DESCRIPTION } from './links/box-capture.js';

export interface MqttLinkSettings {
  /** Overrides the URL of every box's provisioning file. */
  readonly url?: string;
  readonly username?: string;
  readonly password?: string;
  readonly topics?: Topics;
}

export interface SimulationOptions {
  readonly members: readonly FleetMember[];
  readonly clock: Clock;
  /** Undefined: no MQTT link. */
  readonly mqtt?: MqttLinkSettings;
  /** One box on one port. */
  readonly serial?: SerialTarget;
  /** Boxes on a virtual BLE radio; `serve` also opens noble's WebSocket port. */
  readonly ble?: { readonly mtu?: number; readonly serve?: boolean; readonly radio?: VirtualRadio };
  /** Folder of the state files (`box-<module_id>-<fingerprint of the box key>.json`, state-file.ts); null keeps state in memory. */
  readonly stateDir: string | null;
  /** Applied to every box before its own settings from the fleet file. */
  readonly settings?: SimSetCommand;
  readonly barrierTimings?: BarrierTimings;
  readonly carPassDelayMs?: number;
  readonly bugs?: readonly FirmwareBug[];
  /** MQTT connections opened at once while a fleet comes up. */
  readonly connectConcurrency?: number;
  readonly logger?: Logger;
  /** Records every link from the boxes' side (docs/capture.md): one
   * interface per link, `serial:<path>`, `ble:PB-<module_id>`, and one
   * `mqtt:<broker URL>` per broker. */
  readonly capture?: CaptureSink;
  readonly onProgress?: (connected: number, total: number) => void;
}

export interface SimulationSummary {
  readonly boxes: number;
  readonly online: number;
  readonly commandsAnswered: number;
  readonly commandsDropped: number;
  readonly badFrames: number;
  readonly badMessages: number;
  readonly faults: number;
}

interface RunningBox {
  readonly box: SimulatedBox;
  mqtt?: BoxMqttLink;
  serial?: BoxSerialLink;
  ble?: BoxBlePeripheral;
}

export class SimulationError extends Error {
  override readonly name = 'SimulationError';
}

export class Simulation {
  private constructor(
    readonly boxes: readonly RunningBox[],
    readonly radio: VirtualRadio | undefined,
    private readonly radioServer: WebSocketRadioServer | undefined,
  ) {}

  static async start(options: SimulationOptions): Promise<Simulation> {
    const logger = options.logger ?? silentLogger;
    if (options.serial !== undefined && options.members.length !== 1) {
      throw new SimulationError('a serial port carries one box: use --box, not a fleet, with --serial');
    }
    if (options.stateDir !== null) await mkdir(options.stateDir, { recursive: true });
    const radio = options.ble === undefined ? undefined : (options.ble.radio ?? new VirtualRadio());
    const running: RunningBox[] = [];
    for (const member of options.members) {
      const box = await SimulatedBox.start({
        provisioning: member.provisioning,
        clock: options.clock,
        ...(options.stateDir === null
          ? {}
          : { stateFile: await boxStateFileOf(options.stateDir, member.provisioning) }),
        ...(options.barrierTimings === undefined ? {} : { barrierTimings: options.barrierTimings }),
        ...(options.carPassDelayMs === undefined ? {} : { carPassDelayMs: options.carPassDelayMs }),
        ...(options.bugs === undefined ? {} : { bugs: options.bugs }),
      });
      if (options.settings !== undefined) box.apply(options.settings);
      box.apply(member.settings);
      running.push({
        box,
        ...(radio === undefined
          ? {}
          : {
              ble: new BoxBlePeripheral(
                box,
                options.ble?.mtu,
                logger,
                boxCapture(options.capture, box, 'ble', bleLocalName(box.moduleId)),
              ),
            }),
      });
    }
    let radioServer: WebSocketRadioServer | undefined;
    try {
      for (const entry of running) if (entry.ble !== undefined) radio?.add(entry.ble);
      if (options.ble?.serve === true && radio !== undefined)
        radioServer = await serveNobleWebSocket(radio, { logger });
      await Simulation.#attachLinks(running, options, logger);
      return new Simulation(running, radio, radioServer);
    } catch (error) {
      // Whatever came up (boxes, links already connected, the radio) goes down again.
      await new Simulation(running, radio, radioServer).stop();
      throw error;
    }
  }

  /** Gives each box its links, in place, so a failure half-way can undo them. */
  static async #attachLinks(running: RunningBox[], options: SimulationOptions, logger: Logger): Promise<void> {
    const serialTarget = options.serial;
    if (serialTarget !== undefined) {
      const entry = running[0];
      if (entry !== undefined) {
        const capture = boxCapture(options.capture, entry.box, 'serial', serialTarget.path);
        const serial = new BoxSerialLink(entry.box, {
          target: serialTarget,
          clock: options.clock,
          logger,
          ...(capture === undefined ? {} : { capture }),
        });
        await serial.start().catch((error: unknown) => {
          throw new SimulationError(`cannot open ${serialTarget.path}: ${messageOf(error)}`);
        });
        entry.serial = serial;
      }
    }
    const mqttSettings = options.mqtt;
    if (mqttSettings === undefined) return;
    const total = running.length;
    let connected = 0;
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < running.length) {
        const entry = running[next++];
        if (entry === undefined) continue;
        const account = entry.box.provisioning.mqtt;
        const url = mqttSettings.url ?? account?.url;
        const username = mqttSettings.username ?? account?.username;
        const password = mqttSettings.password ?? account?.password;
        if (url === undefined || username === undefined || password === undefined) {
          throw new SimulationError(
            `box ${entry.box.moduleId} has no MQTT account in its provisioning file: give --mqtt URL and credentials`,
          );
        }
        const capture = boxCapture(options.capture, entry.box, 'mqtt', brokerName(url));
        entry.mqtt = new BoxMqttLink(entry.box, {
          url,
          username,
          password,
          clock: options.clock,
          logger,
          ...(capture === undefined ? {} : { capture }),
          ...(mqttSettings.topics === undefined ? {} : { topics: mqttSettings.topics }),
        });
        await entry.mqtt.start();
        options.onProgress?.(++connected, total);
      }
    };
    await Promise.all(
      Array.from({ length: Math.min(Math.max(1, options.connectConcurrency ?? 100), running.length) }, () => worker()),
    );
  }

  box(moduleId: number): SimulatedBox | undefined {
    return this.boxes.find((entry) => entry.box.moduleId === moduleId)?.box;
  }

  /** Applies a `sim/set` to one box as a message on its `sim/set` topic
   * would (offline_seconds takes its MQTT link off the broker); false when
   * no box of this simulation has that module id. */
  simSet(moduleId: number, command: SimSetCommand): boolean {
    const entry = this.boxes.find((candidate) => candidate.box.moduleId === moduleId);
    if (entry === undefined) return false;
    if (entry.mqtt === undefined) entry.box.apply(command);
    else entry.mqtt.simSet(command);
    return true;
  }

  summary(): SimulationSummary {
    let online = 0;
    let commandsAnswered = 0;
    let commandsDropped = 0;
    let badFrames = 0;
    let badMessages = 0;
    let faults = 0;
    for (const entry of this.boxes) {
      const { counters } = entry.box;
      if (entry.mqtt === undefined ? entry.serial?.open !== false : entry.mqtt.connected) online++;
      commandsAnswered += counters.commandsAnswered;
      commandsDropped += counters.commandsDropped;
      badFrames += counters.badFrames + (entry.ble?.counters.badChunks ?? 0) + (entry.serial?.badFrames ?? 0);
      badMessages += entry.mqtt?.counters.badMessages ?? 0;
      if (entry.box.snapshot().faults.length > 0) faults++;
    }
    return { boxes: this.boxes.length, online, commandsAnswered, commandsDropped, badFrames, badMessages, faults };
  }

  /** Closes every link (boxes publish `offline`) and waits for state files. */
  async stop(): Promise<void> {
    await this.radioServer?.close();
    await Promise.all(
      this.boxes.map(async (entry) => {
        await entry.mqtt?.stop();
        await entry.serial?.stop();
        if (entry.ble !== undefined) {
          this.radio?.remove(entry.ble);
          entry.ble.detach();
        }
        await entry.box.stop();
      }),
    );
  }
}

/** The capture of one box's link, when the simulation records. */
function boxCapture(
  sink: CaptureSink | undefined,
  box: SimulatedBox,
  link: CaptureLinkName,
  name: string,
): BoxCapture | undefined {
  if (sink === undefined) return undefined;
  return new BoxCapture(new LinkCapture(sink, link, name, { description: SIM_CAPTURE_DESCRIPTION }), box);
}
