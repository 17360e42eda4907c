// `parkbench start`'s bench: the whole bench of whole-bench/, its failure
// turned into the CLI's one line and exit code (2 when a setting must
// change: a database parkbench must not use, a broker without the bench's
// accounts; 1 otherwise). The demo data's DomainError goes as it is (main.ts
// prints it, exit 1).
import { startWholeBench, BenchStartError, type WholeBench, type WholeBenchOptions } from '../../whole-bench/index.js';
import { CliError, ExitCode } from '../errors.js';

/** How `parkbench start` sets its ports: its flags and settings. */
const PORT_HINTS = { http: 'set PORT or --port', mqtt: 'set MQTT_PORT, or MQTT_URL for an external broker' } as const;

export async function startCliBench(options: Omit<WholeBenchOptions, 'portHints'>): Promise<WholeBench> {
  try {
    return await startWholeBench({ ...options, portHints: PORT_HINTS });
  } catch (error) {
    if (!(error instanceof BenchStartError)) throw error;
    throw new CliError(error.message, error.settingsMustChange ? ExitCode.usage : ExitCode.failure);
  }
}
