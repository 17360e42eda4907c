// The link to the box under test, opened for `parkbench conformance`: a
// serial port, BLE (noble) or a broker. A link that cannot open yet (a pty
// that socat has not made, a broker still starting) is tried again until
// `waitUntil` (--wait-ms); then its reason is one line, exit 1. It is
// opened again after a power cycle (powered-target.ts). With a capture, the
// link records through one OpeningLinkCapture, made once for every try and
// every opening.
import { bleLocalName } from '../../firmware-protocol/index.js';
import { sleep, systemClock } from '../../lib/clock.js';
import type { Logger } from '../../lib/logger.js';
import { messageOf } from '../../lib/message-of.js';
import { loadNoble } from '../../lib/noble.js';
import type { Provisioning } from '../../lib/provisioning-file.js';
import type { BoxTarget } from '../../conformance/box-target.js';
import { BleBoxTarget } from '../../conformance/targets/ble-box-target.js';
import { MqttBoxTarget } from '../../conformance/targets/mqtt-box-target.js';
import { brokerName } from '../../lib/capture/mqtt-capture.js';
import { SerialBoxTarget } from '../../conformance/targets/serial-box-target.js';
import { OpeningLinkCapture, type SuiteKeys } from '../../conformance/capture/opening-link-capture.js';
import type { CaptureSink } from '../../lib/capture/sink.js';
import { CliError } from '../errors.js';
import type { TargetChoice } from './flags.js';

/** What the link records through: the run's sink, and the keys the suite
 * opens the frames with. */
export interface TargetCapture {
  readonly sink: CaptureSink;
  readonly keys: SuiteKeys;
}

/** if_description of the suite's interfaces. */
const RECORDED_BY = 'parkbench conformance';

/** Between two tries to open the link, ms. */
const REOPEN_PAUSE_MS = 200;

/** Opens the link to the box, as often as asked (again after a power
 * cycle), each time tried until `waitUntil`; one capture for every opening. */
export type TargetOpener = (waitUntil: number) => Promise<BoxTarget>;

export async function targetOpener(
  choice: TargetChoice,
  provisioning: Provisioning,
  cycleMs: number,
  logger: Logger,
  capture?: TargetCapture,
): Promise<TargetOpener> {
  const make = await targetMaker(choice, provisioning, cycleMs, logger, capture);
  return async (waitUntil) => {
    for (;;) {
      const target = make();
      try {
        await target.open();
        return target;
      } catch (error) {
        await target.close().catch(() => undefined);
        const left = waitUntil - systemClock.now();
        if (left <= 0) throw new CliError(`cannot reach the box over ${choice.kind}: ${messageOf(error)}`);
        await sleep(systemClock, Math.min(REOPEN_PAUSE_MS, left));
      }
    }
  };
}

async function targetMaker(
  choice: TargetChoice,
  provisioning: Provisioning,
  cycleMs: number,
  logger: Logger,
  capture: TargetCapture | undefined,
): Promise<() => BoxTarget> {
  const linkCapture = (name: string): OpeningLinkCapture | undefined =>
    capture === undefined
      ? undefined
      : new OpeningLinkCapture(capture.sink, choice.kind, name, capture.keys, { description: RECORDED_BY });
  switch (choice.kind) {
    case 'serial': {
      const serialCapture = linkCapture(choice.target.path);
      return () =>
        new SerialBoxTarget({
          target: choice.target,
          boxKey: provisioning.boxKey,
          clock: systemClock,
          logger,
          ...(serialCapture === undefined ? {} : { capture: serialCapture }),
        });
    }
    case 'ble': {
      keepStdoutForResults();
      const noble = await loadNoble().catch((error: unknown) => Promise.reject(new CliError(messageOf(error))));
      const bleCapture = linkCapture(bleLocalName(provisioning.moduleId));
      // Status reports come only while connected: stay connected through a barrier cycle.
      return () =>
        new BleBoxTarget({
          noble,
          mac: choice.mac,
          moduleId: provisioning.moduleId,
          boxKey: provisioning.boxKey,
          clock: systemClock,
          logger,
          idleMs: cycleMs + 60_000,
          ...(bleCapture === undefined ? {} : { capture: bleCapture }),
        });
    }
    case 'mqtt': {
      const mqttCapture = linkCapture(brokerName(choice.url));
      return () =>
        new MqttBoxTarget({
          url: choice.url,
          moduleId: provisioning.moduleId,
          topics: choice.topics,
          clock: systemClock,
          ...(choice.username === undefined ? {} : { username: choice.username }),
          ...(choice.password === undefined ? {} : { password: choice.password }),
          ...(mqttCapture === undefined ? {} : { capture: mqttCapture }),
        });
    }
  }
}

/** noble's WebSocket client (NOBLE_WEBSOCKET=1) prints its state with
 * console.log; stdout is for the results (--json must parse), so console.log
 * goes to stderr from here on. */
function keepStdoutForResults(): void {
  console.log = (...args: unknown[]): void => {
    console.error(...args);
  };
}
