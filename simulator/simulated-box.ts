// One simulated box: the protocol's decision (firmware-protocol, one copy of
// the rules) wrapped in the physical world of a box: barrier, battery, clock,
// persisted state, and faults on demand. Links (MQTT, serial, BLE) hand it
// command bytes and carry its answers; it knows nothing of them.
import { EventEmitter } from 'node:events';
import { sleep, type Clock } from '../lib/clock.js';
import { Barrier as BarrierByte, Status } from '../firmware-protocol/constants.js';
import {
  forgetExpiredTries,
  initialBoxState,
  type BoxConditions,
  type BoxConfig,
  type BoxState,
} from '../firmware-protocol/box.js';
import { decide, statusReport, type Decision } from '../firmware-protocol/decide.js';
import { SimulatedBarrier, type BarrierState, type BarrierTimings } from './barrier.js';
import { Battery, type BatteryModel } from './battery.js';
import { BoxClock, type BoxClockSettings } from './box-clock.js';
import { checkEnduranceFaults, describeFaults, noEnduranceFaults, noFaults, type EnduranceFaults } from './faults.js';
import type { FaultSettings, SimSetCommand } from '../lib/sim-set.js';
import type { FirmwareBug } from './firmware-bug-names.js';
import { firmwareBugs, stateAtStart } from './firmware-bugs.js';
import type { Provisioning } from '../lib/provisioning-file.js';
import type { BoxStateFile } from './state-file.js';

export interface SimulatedBoxOptions {
  readonly provisioning: Provisioning;
  readonly clock: Clock;
  /** Where tries, box_seq, the last control sequence, the issuer keys and the
   * revocation list survive a restart; without one they live in memory only. */
  readonly stateFile?: BoxStateFile;
  readonly barrierTimings?: BarrierTimings;
  readonly batteryModel?: BatteryModel;
  readonly boxClock?: BoxClockSettings;
  readonly faults?: Partial<FaultSettings>;
  /** A battery that sags with each opening, a barrier that jams every n-th opening. */
  readonly endurance?: Partial<EnduranceFaults>;
  /** When set, a car drives through this long after the barrier is open
   * (fleet mode); otherwise only carPassed() or the hold time closes it. */
  readonly carPassDelayMs?: number;
  /** Random numbers in [0, 1) for the share-based faults; injectable for tests. */
  readonly random?: () => number;
  readonly bugs?: readonly FirmwareBug[];
}

/** The box as its published state shows it (docs/architecture.md, Messages (state)). */
export interface BoxSnapshot {
  readonly barrier: BarrierState;
  readonly battery_mv: number;
  readonly box_time: string;
  readonly box_seq: number;
  readonly faults: string[];
  readonly updated_at: string;
}

export interface BoxCounters {
  commandsReceived: number;
  commandsAnswered: number;
  commandsDropped: number;
  responsesCorrupted: number;
  /** Answers MALFORMED or UNSUPPORTED_VERSION: garbage that reached the box. */
  badFrames: number;
}

export interface SimulatedBoxEvents {
  /** Something the published state shows has changed. */
  change: [snapshot: BoxSnapshot];
  /** A command was answered (before link-level faults like corruption). */
  answered: [status: Status];
}

const barrierBytes: Record<BarrierState, BarrierByte> = {
  closed: BarrierByte.CLOSED,
  opening: BarrierByte.OPENING,
  open: BarrierByte.OPEN,
  closing: BarrierByte.CLOSING,
  fault: BarrierByte.FAULT,
};

export class SimulatedBox extends EventEmitter<SimulatedBoxEvents> {
  readonly config: BoxConfig;
  readonly barrier: SimulatedBarrier;
  readonly battery: Battery;
  readonly boxClock: BoxClock;
  readonly counters: BoxCounters = {
    commandsReceived: 0,
    commandsAnswered: 0,
    commandsDropped: 0,
    responsesCorrupted: 0,
    badFrames: 0,
  };
  #state: BoxState;
  #faults: FaultSettings;
  readonly #endurance: EnduranceFaults;
  /** ACCESS commands that would have opened the barrier, for `jamEvery`. */
  #openings = 0;
  #updatedAt: number;
  #carTimer: object | undefined;
  /** Commands and reports are decided one at a time, in arrival order, each
   * persisted before the next: box_seq must never repeat. */
  #queue: Promise<unknown> = Promise.resolve();
  readonly #random: () => number;

  private constructor(
    private readonly options: SimulatedBoxOptions,
    state: BoxState,
  ) {
    super();
    const { provisioning, clock } = options;
    this.config = {
      moduleId: provisioning.moduleId,
      parkingId: provisioning.parkingId,
      direction: provisioning.direction,
      parkingKey: provisioning.parkingKey,
      parkingKeyNext: provisioning.parkingKeyNext,
      boxKey: provisioning.boxKey,
      skewSeconds: provisioning.skewSeconds,
      minBatteryMv: provisioning.minBatteryMv,
    };
    this.#state = state;
    this.#faults = { ...noFaults, ...options.faults };
    this.#endurance = checkEnduranceFaults({ ...noEnduranceFaults, ...options.endurance });
    this.#random = options.random ?? Math.random;
    this.#updatedAt = clock.now();
    this.barrier = new SimulatedBarrier(clock, options.barrierTimings);
    this.battery = new Battery(clock, options.batteryModel);
    this.boxClock = new BoxClock(clock, options.boxClock);
    this.barrier.setJammed(this.#faults.jammed);
    this.barrier.on('movement', () => this.battery.drainMovement());
    this.barrier.on('change', (barrierState) => {
      if (barrierState === 'open') this.#scheduleCarPass();
      this.#changed();
    });
  }

  /** Starts a box, picking up its saved state if it has one. */
  static async start(options: SimulatedBoxOptions): Promise<SimulatedBox> {
    // docs/protocol.md, Provisioning file: the issuer keys the box starts with; its own state wins once it has one.
    const seed = {
      issuerKey: options.provisioning.issuerKey,
      issuerKeyPrevious: options.provisioning.issuerKeyPrevious,
    };
    const state = options.stateFile === undefined ? initialBoxState(seed) : await options.stateFile.load(seed);
    return new SimulatedBox(options, stateAtStart(options.bugs ?? [], state));
  }

  get moduleId(): number {
    return this.config.moduleId;
  }

  get provisioning(): Provisioning {
    return this.options.provisioning;
  }

  get state(): BoxState {
    return this.#state;
  }

  get faults(): FaultSettings {
    return this.#faults;
  }

  get endurance(): EnduranceFaults {
    return this.#endurance;
  }

  /**
   * A command arrived on a link. Resolves with the response frame to send
   * back, or null when a fault drops the command (the box stays silent).
   */
  handleCommand(command: Uint8Array): Promise<Buffer | null> {
    this.counters.commandsReceived++;
    if (this.#random() < this.#faults.dropCommands) {
      this.counters.commandsDropped++;
      return Promise.resolve(null);
    }
    return this.#exclusive(async () => {
      const conditions = this.#conditions();
      const state = forgetExpiredTries(this.config, this.#state, conditions.boxTime);
      let decision = this.#applyBugs(state, conditions, command);
      const jamsNow = decision.effect.type === 'open' && this.#jamsThisOpening();
      // docs/protocol.md, step 11: a jammed barrier answers BARRIER_FAULT (the try still counts).
      if (jamsNow) decision = this.#applyBugs(state, { ...conditions, jammed: true }, command);
      await this.#persist(decision.state);
      switch (decision.effect.type) {
        case 'open':
          this.barrier.open();
          if (this.#endurance.batteryDrainMv > 0)
            this.battery.set(this.battery.millivolts - this.#endurance.batteryDrainMv);
          break;
        case 'fault':
          if (jamsNow) this.barrier.jamOnce();
          else this.barrier.open();
          break;
        case 'setTime':
          this.boxClock.setSeconds(decision.effect.time);
          this.#changed();
          break;
        case 'none':
          break;
      }
      this.counters.commandsAnswered++;
      if (decision.status === Status.MALFORMED || decision.status === Status.UNSUPPORTED_VERSION)
        this.counters.badFrames++;
      this.emit('answered', decision.status);
      return decision.response;
    }).then(async (response) => {
      if (this.#faults.delayMs > 0) await sleep(this.options.clock, this.#faults.delayMs);
      return this.#maybeCorrupt(response);
    });
  }

  /** A status report (docs/protocol.md, Serial link framing, type 0x82), with its
   * own box_seq: for start-up, barrier changes and status requests. */
  statusReport(): Promise<Buffer> {
    return this.#exclusive(async () => {
      const report = statusReport(this.config, this.#state, this.#conditions());
      await this.#persist(report.state);
      return report.response;
    });
  }

  /** A car drove through: the barrier comes down. */
  carPassed(): void {
    this.barrier.carPassed();
  }

  /** Applies a `sim/set` command (or the same settings from flags). */
  apply(command: SimSetCommand): void {
    if (command.faults !== undefined) {
      this.#faults = { ...this.#faults, ...command.faults };
      this.barrier.setJammed(this.#faults.jammed);
    }
    if (command.batteryMv !== undefined) this.battery.set(command.batteryMv);
    if (command.clockOffsetSeconds !== undefined) this.boxClock.setOffset(command.clockOffsetSeconds * 1000);
    if (command.driftPpm !== undefined) this.boxClock.setDrift(command.driftPpm);
    if (command.carPassed === true) this.carPassed();
    this.#changed();
  }

  /** What a power cut leaves as it was, as the settings that put it back:
   * the faults the bench set (a jammed arm stays jammed), the battery's
   * charge, and the real-time clock on its backup cell (its offset from
   * true time at the cut, a TIME_SET included, and its drift). */
  settingsKeptThroughPowerCut(): SimSetCommand {
    return {
      faults: { ...this.#faults },
      batteryMv: this.battery.millivolts,
      clockOffsetSeconds: this.boxClock.offsetMs / 1000,
      driftPpm: this.boxClock.driftPpm,
    };
  }

  snapshot(): BoxSnapshot {
    return {
      barrier: this.barrier.state,
      battery_mv: this.battery.millivolts,
      box_time: new Date(this.boxClock.nowSeconds() * 1000).toISOString(),
      box_seq: this.#state.boxSeq,
      faults: describeFaults(this.#faults, this.#endurance),
      updated_at: new Date(this.#updatedAt).toISOString(),
    };
  }

  /** Stops timers; waits for the command being decided to be saved. */
  async stop(): Promise<void> {
    if (this.#carTimer !== undefined) this.options.clock.clearTimeout(this.#carTimer);
    this.barrier.dispose();
    await this.#queue.catch(() => undefined);
  }

  #jamsThisOpening(): boolean {
    if (this.#endurance.jamEvery === 0) return false;
    this.#openings++;
    return this.#openings % this.#endurance.jamEvery === 0;
  }

  #conditions(): BoxConditions {
    return {
      boxTime: this.boxClock.nowSeconds(),
      batteryMv: this.battery.millivolts,
      barrier: barrierBytes[this.barrier.state],
      jammed: this.barrier.jammed,
    };
  }

  #applyBugs(state: BoxState, conditions: BoxConditions, command: Uint8Array): Decision {
    const decideAgain = (changes: { conditions?: BoxConditions; state?: BoxState; command?: Uint8Array }): Decision =>
      decide(this.config, changes.state ?? state, changes.conditions ?? conditions, changes.command ?? command);
    let decision = decide(this.config, state, conditions, command);
    for (const bug of this.options.bugs ?? [])
      decision = firmwareBugs[bug]({ decision, conditions, state, command, decideAgain });
    return decision;
  }

  async #persist(state: BoxState): Promise<void> {
    if (this.options.stateFile !== undefined) await this.options.stateFile.save(state);
    this.#state = state;
  }

  #maybeCorrupt(response: Buffer): Buffer {
    if (this.#faults.corruptResponses <= 0 || this.#random() >= this.#faults.corruptResponses) return response;
    this.counters.responsesCorrupted++;
    const corrupted = Buffer.from(response);
    const bit = Math.floor(this.#random() * corrupted.length * 8) % (corrupted.length * 8);
    corrupted[bit >> 3] = (corrupted[bit >> 3] ?? 0) ^ (1 << (bit & 7));
    return corrupted;
  }

  #exclusive<T>(work: () => Promise<T>): Promise<T> {
    const result = this.#queue.then(work);
    this.#queue = result.catch(() => undefined);
    return result;
  }

  #scheduleCarPass(): void {
    const delay = this.options.carPassDelayMs;
    if (delay === undefined) return;
    if (this.#carTimer !== undefined) this.options.clock.clearTimeout(this.#carTimer);
    this.#carTimer = this.options.clock.setTimeout(() => {
      this.#carTimer = undefined;
      this.carPassed();
    }, delay);
  }

  #changed(): void {
    this.#updatedAt = this.options.clock.now();
    this.emit('change', this.snapshot());
  }
}
