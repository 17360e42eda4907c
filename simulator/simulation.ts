// A running simulation: one box or a fleet, each box with the links it was
// given (docs/protocol.md, Serial link framing and BLE link; docs/architecture.md, Access: `--serial` alone means serial
// only, MQTT when asked for or when no link is named), its state file, its
// faults. What `parkbench sim` runs, and what tests and benchmarks start in
// process. Its power switch (setPower) cuts the boxes as a real power loss
// would and starts them again from their state files, as a process start.
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
import type { EnduranceFaults } from './faults.js';
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
  /** Every box's battery sag per opening and jam every n-th opening. */
  readonly endurance?: Partial<EnduranceFaults>;
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

export interface RunningBox {
  readonly box: SimulatedBox;
  mqtt?: BoxMqttLink;
  serial?: BoxSerialLink;
  ble?: BoxBlePeripheral;
}

export class SimulationError extends Error {
  override readonly name = 'SimulationError';
}

export class Simulation {
  #boxes: readonly RunningBox[];
  #powered = true;
  /** Power transitions, one at a time in the order asked. */
  #power: Promise<void> = Promise.resolve();
  /** Per module id, what the last power cut left as it was (faults, battery,
   * clock), applied again at power on over the start-up settings. */
  #keptThroughPowerCut = new Map<number, SimSetCommand>();

  private constructor(
    boxes: readonly RunningBox[],
    readonly radio: VirtualRadio | undefined,
    private readonly radioServer: WebSocketRadioServer | undefined,
    private readonly options: SimulationOptions,
  ) {
    this.#boxes = boxes;
  }

  /** The boxes with their links; none while the power is off. */
  get boxes(): readonly RunningBox[] {
    return this.#boxes;
  }

  get powered(): boolean {
    return this.#powered;
  }

  static async start(options: SimulationOptions): Promise<Simulation> {
    if (options.serial !== undefined && options.members.length !== 1) {
      throw new SimulationError('a serial port carries one box: use --box, not a fleet, with --serial');
    }
    if (options.stateDir !== null) await mkdir(options.stateDir, { recursive: true });
    const radio = options.ble === undefined ? undefined : (options.ble.radio ?? new VirtualRadio());
    const running: RunningBox[] = [];
    let radioServer: WebSocketRadioServer | undefined;
    try {
      await Simulation.#startBoxes(running, options, radio);
      if (options.ble?.serve === true && radio !== undefined)
        radioServer = await serveNobleWebSocket(radio, { logger: options.logger ?? silentLogger });
      await Simulation.#attachLinks(running, options, false);
      return new Simulation(running, radio, radioServer, options);
    } catch (error) {
      // Whatever came up (boxes, links already connected, the radio) goes down again.
      await new Simulation(running, radio, radioServer, options).stop();
      throw error;
    }
  }

  /**
   * The boxes' power switch. Off: as a real box losing power, no clean
   * shutdown: the links go silent at once (the serial port is closed, the
   * MQTT connection is destroyed without a DISCONNECT so the broker publishes
   * the will, BLE stops advertising), the timers stop and the boxes are
   * dropped; nothing more is written to the state files. On: the boxes start
   * again from their state files, as a process start would, on the same
   * links, with what a power cut does not change: the faults set at run
   * time, the battery's charge and the real-time clock (on its backup cell). Resolves once the transition is done (on: the boxes answer).
   */
  setPower(on: boolean): Promise<void> {
    const transition = this.#power.then(() => (on ? this.#powerOn() : this.#powerOff()));
    this.#power = transition.catch(() => undefined);
    return transition;
  }

  async #powerOff(): Promise<void> {
    if (!this.#powered) return;
    this.#powered = false;
    const boxes = this.#boxes;
    this.#boxes = [];
    this.#keptThroughPowerCut = new Map(
      boxes.map((entry) => [entry.box.moduleId, entry.box.settingsKeptThroughPowerCut()]),
    );
    await Promise.all(
      boxes.map(async (entry) => {
        if (entry.ble !== undefined) {
          this.radio?.remove(entry.ble);
          entry.ble.detach();
        }
        await entry.mqtt?.cut();
        await entry.serial?.stop();
        await entry.box.stop();
      }),
    );
  }

  async #powerOn(): Promise<void> {
    if (this.#powered) return;
    const running: RunningBox[] = [];
    try {
      await Simulation.#startBoxes(running, this.options, this.radio, this.#keptThroughPowerCut);
      // What the other side sent while the box was off is gone, as on a real box.
      await Simulation.#attachLinks(running, this.options, true);
    } catch (error) {
      await Promise.all(running.map((entry) => Simulation.#stopBox(entry, this.radio)));
      throw error;
    }
    this.#boxes = running;
    this.#powered = true;
  }

  /** Starts each member's box (from its state file) and its BLE peripheral,
   * in place; after a power cut, with what the cut left as it was. */
  static async #startBoxes(
    running: RunningBox[],
    options: SimulationOptions,
    radio: VirtualRadio | undefined,
    keptThroughPowerCut: ReadonlyMap<number, SimSetCommand> = new Map(),
  ): Promise<void> {
    const logger = options.logger ?? silentLogger;
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
        ...(options.endurance === undefined ? {} : { endurance: options.endurance }),
      });
      if (options.settings !== undefined) box.apply(options.settings);
      box.apply(member.settings);
      const kept = keptThroughPowerCut.get(box.moduleId);
      if (kept !== undefined) box.apply(kept);
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
    for (const entry of running) if (entry.ble !== undefined) radio?.add(entry.ble);
  }

  /** Gives each box its links, in place, so a failure half-way can undo them. */
  static async #attachLinks(running: RunningBox[], options: SimulationOptions, flushOnOpen: boolean): Promise<void> {
    const logger = options.logger ?? silentLogger;
    const serialTarget = options.serial;
    if (serialTarget !== undefined) {
      const entry = running[0];
      if (entry !== undefined) {
        const capture = boxCapture(options.capture, entry.box, 'serial', serialTarget.path);
        const serial = new BoxSerialLink(entry.box, {
          target: serialTarget,
          clock: options.clock,
          logger,
          flushOnOpen,
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

  static async #stopBox(entry: RunningBox, radio: VirtualRadio | undefined): Promise<void> {
    await entry.mqtt?.stop();
    await entry.serial?.stop();
    if (entry.ble !== undefined) {
      radio?.remove(entry.ble);
      entry.ble.detach();
    }
    await entry.box.stop();
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
    return {
      boxes: this.options.members.length,
      online,
      commandsAnswered,
      commandsDropped,
      badFrames,
      badMessages,
      faults,
    };
  }

  /** Closes every link (boxes publish `offline`) and waits for state files
   * (after a power transition under way). */
  async stop(): Promise<void> {
    await this.#power;
    await this.radioServer?.close();
    await Promise.all(this.#boxes.map((entry) => Simulation.#stopBox(entry, this.radio)));
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
