// Loading noble. `import '@abandonware/noble'` throws at import on a machine
// without Bluetooth, so it is loaded only when BLE is asked
// for; with bindings given (a virtual radio in tests or the simulator's), it
// is built through noble's own injection point instead.
import type * as NobleModule from '@abandonware/noble';
import type { Clock } from './clock.js';
import { messageOf } from './message-of.js';

/** The noble API (the default instance's shape). */
export type Noble = typeof NobleModule;
export type { Characteristic, Peripheral } from '@abandonware/noble';

export class BleUnavailableError extends Error {
  override readonly name = 'BleUnavailableError';
}

export async function loadNoble(bindings?: object): Promise<Noble> {
  if (bindings !== undefined) {
    const { default: withBindings } = await import('@abandonware/noble/with-bindings.js');
    return withBindings(bindings) as Noble;
  }
  try {
    const module = (await import('@abandonware/noble')) as Noble & { default?: Noble };
    return module.default ?? module;
  } catch (error) {
    throw new BleUnavailableError(`BLE is not available on this machine: ${messageOf(error)}`);
  }
}

/** Resolves once the radio is powered on; rejects if it reports another
 * final state or stays silent for `timeoutMs`. */
export function waitPoweredOn(noble: Noble, clock: Clock, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const finish = (error?: Error): void => {
      clock.clearTimeout(timer);
      noble.removeListener('stateChange', onState);
      if (error === undefined) resolve();
      else reject(error);
    };
    const onState = (state: string): void => {
      if (state === 'poweredOn') finish();
      else if (state === 'unsupported' || state === 'unauthorized')
        finish(new BleUnavailableError(`the Bluetooth adapter is ${state}`));
    };
    const timer = clock.setTimeout(
      () =>
        finish(
          new BleUnavailableError(
            `the Bluetooth adapter did not power on within ${timeoutMs} ms (state: ${noble._state})`,
          ),
        ),
      timeoutMs,
    );
    // Listening first is what makes noble initialize its bindings: a radio
    // that announced itself before (noble's WebSocket client does, on
    // connecting) would otherwise leave noble uninitialized, and its next
    // startScanning would wait for a state change that already happened.
    noble.on('stateChange', onState);
    if (noble._state === 'poweredOn') finish();
  });
}
