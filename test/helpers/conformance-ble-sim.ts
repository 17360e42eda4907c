// A simulated box on the simulator's virtual BLE radio in process, and the
// suite's BLE target on the same radio (noble through its bindings
// injection point): shared by the BLE tests of test/conformance and
// test/soak. Each is stopped or closed when the test ends.
import type { ExecutionContext } from 'ava';
import { systemClock } from '../../lib/clock.js';
import { loadNoble } from '../../lib/noble.js';
import { VirtualRadio } from '../../simulator/ble/virtual-radio.js';
import { Simulation, type SimulationOptions } from '../../simulator/simulation.js';
import { BleBoxTarget, type BleBoxTargetOptions } from '../../conformance/targets/ble-box-target.js';
import type { BoxFile } from './conformance-fixtures.js';

type RadioBindings = ReturnType<VirtualRadio['createBindings']>;

export interface SimOnRadioOptions {
  readonly barrierTimings?: SimulationOptions['barrierTimings'];
  /** The box's ATT MTU (the simulator's default when not given). */
  readonly mtu?: number;
  readonly settings?: SimulationOptions['members'][number]['settings'];
}

/** The box of `box` on a fresh virtual radio; `bindings` are a central's on that radio. */
export async function simOnRadio(
  t: ExecutionContext,
  box: BoxFile,
  options: SimOnRadioOptions = {},
): Promise<{ simulation: Simulation; bindings: RadioBindings }> {
  const radio = new VirtualRadio();
  const simulation = await Simulation.start({
    members: [{ provisioning: box.provisioning, settings: options.settings ?? {} }],
    clock: systemClock,
    stateDir: null,
    ...(options.barrierTimings === undefined ? {} : { barrierTimings: options.barrierTimings }),
    ble: options.mtu === undefined ? { radio } : { radio, mtu: options.mtu },
  });
  t.teardown(() => simulation.stop());
  const bindings = radio.createBindings();
  t.teardown(() => bindings.close());
  return { simulation, bindings };
}

/** The suite's BLE target for the box of `box` over `bindings`, not yet opened: a 60 s idle, 5 s to discover the box. */
export async function bleTarget(
  bindings: RadioBindings,
  box: BoxFile,
  overrides: Partial<Omit<BleBoxTargetOptions, 'noble'>> = {},
): Promise<BleBoxTarget> {
  return new BleBoxTarget({
    noble: await loadNoble(bindings),
    mac: box.provisioning.macAddress,
    moduleId: box.provisioning.moduleId,
    boxKey: box.provisioning.boxKey,
    clock: systemClock,
    idleMs: 60_000,
    discoverTimeoutMs: 5_000,
    ...overrides,
  });
}

/** `bleTarget`, opened (the box discovered and connected), closed when the test ends. */
export async function openedBleTarget(
  t: ExecutionContext,
  bindings: RadioBindings,
  box: BoxFile,
  overrides: Partial<Omit<BleBoxTargetOptions, 'noble'>> = {},
): Promise<BleBoxTarget> {
  const target = await bleTarget(bindings, box, overrides);
  await target.open();
  t.teardown(() => target.close());
  return target;
}
