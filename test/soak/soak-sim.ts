// A simulated box in this process on one end of a real pty pair, and the
// conformance suite's serial target on the other: what the soak tests run
// against. `restart()` stops the simulation and starts it again on the same
// port and state folder, which a PowerDriver of the tests turns into a power cycle.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import { systemClock } from '../../lib/clock.js';
import type { PowerDriver } from '../../lib/power/power-driver.js';
import { parseSerialTarget } from '../../lib/serial-target.js';
import { SerialBoxTarget } from '../../conformance/targets/serial-box-target.js';
import { Simulation, type SimulationOptions } from '../../simulator/simulation.js';
import type { SimSetCommand } from '../../lib/sim-set.js';
import type { EnduranceFaults } from '../../simulator/faults.js';
import { boxFile, type BoxFile } from '../helpers/conformance-fixtures.js';
import { ptyPairForTest } from '../helpers/pty-pair.js';

/** Barrier timings of 0: a cycle is as fast as the link and the reports. */
export const INSTANT_BARRIER = { openingMs: 0, openHoldMs: 0, closingMs: 0 } as const;

export interface SoakSim {
  readonly box: BoxFile;
  readonly target: SerialBoxTarget;
  simulation: Simulation;
  restarts: number;
  restart(): Promise<void>;
  /** A switch whose cycle restarts the simulation. */
  power(settleMs?: number): PowerDriver;
}

export async function soakSim(
  t: ExecutionContext,
  moduleId: number,
  options: { overrides?: Record<string, unknown>; settings?: SimSetCommand; endurance?: Partial<EnduranceFaults> } = {},
): Promise<SoakSim> {
  const box = await boxFile(t, moduleId, options.overrides);
  const pair = await ptyPairForTest(t);
  const stateDir = await mkdtemp(join(tmpdir(), 'pb-soak-state-'));
  t.teardown(() => rm(stateDir, { recursive: true, force: true }));
  const simulationOptions: SimulationOptions = {
    members: [{ provisioning: box.provisioning, settings: options.settings ?? {} }],
    clock: systemClock,
    stateDir,
    barrierTimings: INSTANT_BARRIER,
    serial: parseSerialTarget(pair.a),
    ...(options.endurance === undefined ? {} : { endurance: options.endurance }),
  };
  const target = new SerialBoxTarget({
    target: parseSerialTarget(pair.b),
    boxKey: box.provisioning.boxKey,
    clock: systemClock,
  });
  const sim: SoakSim = {
    box,
    target,
    simulation: await Simulation.start(simulationOptions),
    restarts: 0,
    async restart() {
      await sim.simulation.stop();
      sim.simulation = await Simulation.start(simulationOptions);
      sim.restarts++;
    },
    power(settleMs = 0) {
      return {
        description: 'the test simulation, restarted',
        settleMs,
        on: () => Promise.resolve(),
        off: () => Promise.resolve(),
        cycle: () => sim.restart(),
      };
    },
  };
  await target.open();
  t.teardown(async () => {
    await target.close();
    await sim.simulation.stop();
  });
  return sim;
}
