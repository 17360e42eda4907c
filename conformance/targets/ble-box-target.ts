// The suite over BLE (docs/protocol.md, BLE link), through the gateway's
// BleCentral: the box is found by its local name PB-<module_id>, with its
// MAC address as the allow-list; status reports notified while connected
// show the barrier. noble is given (loaded lazily by the caller, or built
// over a virtual radio's bindings in tests). With a capture, the central
// records the chunks both ways and the frames they make.
import type { Clock } from '../../lib/clock.js';
import type { Logger } from '../../lib/logger.js';
import { BleCentral } from '../../lib/ble-central.js';
import type { LinkCapture } from '../../lib/capture/link-capture.js';
import type { Noble } from '../../lib/noble.js';
import type { BarrierObservation, BoxTarget, Exchange } from '../box-target.js';
import { BarrierFeed } from './barrier-feed.js';
import { bleGarbage } from './garbage.js';
import { reportedBarrier } from './status-reports.js';

export interface BleBoxTargetOptions {
  readonly noble: Noble;
  readonly mac: string;
  readonly moduleId: number;
  readonly boxKey: Uint8Array;
  readonly clock: Clock;
  readonly logger?: Logger;
  /** Longest wait for the box to be discovered, ms. */
  readonly discoverTimeoutMs?: number;
  /** Stay connected this long without a command, ms: status reports come
   * only while connected, so it must outlast a barrier cycle. */
  readonly idleMs: number;
  /** Records the box's chunks and frames (interface `ble:PB-<module_id>`). */
  readonly capture?: LinkCapture;
}

export class BleBoxTarget implements BoxTarget {
  readonly kind = 'ble' as const;
  badReports = 0;
  readonly #central: BleCentral;
  readonly #barrier = new BarrierFeed();

  constructor(private readonly options: BleBoxTargetOptions) {
    this.#central = new BleCentral({
      noble: options.noble,
      clock: options.clock,
      allow: [options.mac],
      idleMs: options.idleMs,
      powerOnTimeoutMs: options.discoverTimeoutMs ?? 10_000,
      ...(options.logger === undefined ? {} : { logger: options.logger }),
      ...(options.capture === undefined
        ? {}
        : { capture: (moduleId: number) => (moduleId === options.moduleId ? options.capture : undefined) }),
    });
    this.#central.on('report', (moduleId, frame) => {
      if (moduleId !== options.moduleId) return;
      const observation = reportedBarrier(frame, options.boxKey, options.clock.now());
      if (observation === null) this.badReports++;
      else this.#barrier.push(observation);
    });
  }

  async open(): Promise<void> {
    const { clock, moduleId } = this.options;
    const timeoutMs = this.options.discoverTimeoutMs ?? 10_000;
    const found = new Promise<boolean>((resolve) => {
      const onDiscovered = (id: number): void => {
        if (id !== moduleId) return;
        clock.clearTimeout(timer);
        this.#central.off('discovered', onDiscovered);
        resolve(true);
      };
      const timer = clock.setTimeout(() => {
        this.#central.off('discovered', onDiscovered);
        resolve(false);
      }, timeoutMs);
      this.#central.on('discovered', onDiscovered);
    });
    await this.#central.start();
    if (!this.#central.boxes.includes(moduleId) && !(await found)) {
      await this.#central.stop();
      throw new Error(`no box advertising PB-${moduleId} at ${this.options.mac} within ${timeoutMs} ms`);
    }
  }

  async exchange(command: Buffer, timeoutMs: number): Promise<Exchange> {
    const started = this.options.clock.now();
    const outcome = await this.#central.send(this.options.moduleId, command, timeoutMs);
    const elapsedMs = this.options.clock.now() - started;
    return 'response' in outcome
      ? { command, response: outcome.response, elapsedMs }
      : { command, response: null, error: outcome.error, elapsedMs };
  }

  async sendGarbage(): Promise<void> {
    await this.#central.writeRaw(this.options.moduleId, bleGarbage());
  }

  onBarrier(listener: (observation: BarrierObservation) => void): void {
    this.#barrier.listen(listener);
  }

  close(): Promise<void> {
    return this.#central.stop();
  }
}
