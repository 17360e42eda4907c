// The suite through the real command line over MQTT against a simulated box
// in process on a real aedes broker: shared by the mqtt*.test.ts files
// (three files, so their command-line runs do not all share one worker).
import type { ExecutionContext } from 'ava';
import { systemClock } from '../../lib/clock.js';
import { Topics } from '../../lib/mqtt-topics.js';
import { Simulation, type SimulationOptions } from '../../simulator/simulation.js';
import { runCli, type CliResult } from './run-cli.js';
import { FAST_BARRIER, type BoxFile, type JsonReport } from './conformance-fixtures.js';

export async function simOnBroker(
  t: ExecutionContext,
  box: BoxFile,
  url: string,
  extra: Partial<SimulationOptions> = {},
): Promise<Simulation> {
  const simulation = await Simulation.start({
    members: [{ provisioning: box.provisioning, settings: {} }],
    clock: systemClock,
    stateDir: null,
    barrierTimings: FAST_BARRIER,
    mqtt: { url, topics: new Topics() },
    ...extra,
  });
  t.teardown(() => simulation.stop());
  return simulation;
}

export function conformance(box: BoxFile, url: string, extra: readonly string[] = []): Promise<CliResult> {
  return runCli([
    'conformance',
    '--box',
    box.path,
    '--mqtt',
    url,
    '--username',
    'operator',
    '--password',
    'pw',
    '--cycle-ms',
    '5000',
    '--json',
    ...extra,
  ]);
}

export function failedNames(report: JsonReport): string[] {
  return report.results.filter((entry) => entry.result === 'fail').map((entry) => entry.name);
}
