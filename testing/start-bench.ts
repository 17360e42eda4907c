// startBench: the whole bench of `parkbench start` (whole-bench/) in the
// calling process, for a test suite: free ports and a fresh temporary data
// folder unless told otherwise, nothing read from the environment, silent
// unless asked, drivers' passwords hashed cheaply, and no handle left open
// once stopped.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { appLogger } from '../api/app-logger.js';
import { loadConfig } from '../api/config/index.js';
import { DomainError } from '../api/http/domain-error.js';
import { freePortOn } from '../lib/free-port.js';
import { silentLogger, type Logger } from '../lib/logger.js';
import { messageOf } from '../lib/message-of.js';
import { packageVersionNear } from '../lib/package-version.js';
import { BenchStartError, startWholeBench, type WholeBench } from '../whole-bench/index.js';
import { benchOf, type Bench } from './bench.js';
import { BenchOptionError, checkOptions, type BenchOptions, type CheckedOptions } from './options.js';

const HOST = '127.0.0.1';
/** How many free HTTP ports a start tries: another process may take the
 * one picked before the API listens on it. */
const FREE_PORT_TRIES = 3;

/** The API with its embedded MQTT broker, the demo parking and its
 * simulated entrance and exit boxes, in this process. Rejects with a
 * BenchOptionError naming the option at fault, or an Error when none is
 * (nothing left running either way). */
export async function startBench(options: BenchOptions = {}): Promise<Bench> {
  const checked = checkOptions(options);
  const dataDir = checked.dataDir ?? (await mkdtemp(join(tmpdir(), 'parkbench-testing-')));
  // The folder made here, removed at stop; a dataDir given is the caller's.
  const temporary = checked.dataDir === undefined ? dataDir : undefined;
  try {
    const running = await startOnFreePorts(checked, dataDir);
    return benchOf(running, async () => {
      await running.stop();
      if (temporary !== undefined) await rm(temporary, { recursive: true, force: true });
    });
  } catch (error) {
    if (temporary !== undefined) await rm(temporary, { recursive: true, force: true });
    throw optionErrorOf(error, checked);
  }
}

async function startOnFreePorts(checked: CheckedOptions, dataDir: string): Promise<WholeBench> {
  for (let attempt = 1; ; attempt++) {
    const port = checked.port ?? (await freePortOn(HOST));
    try {
      return await startOn(checked, dataDir, port);
    } catch (error) {
      const taken =
        error instanceof BenchStartError &&
        error.setting === 'port' &&
        (error.cause as NodeJS.ErrnoException | undefined)?.code === 'EADDRINUSE';
      if (!taken || checked.port !== undefined || attempt === FREE_PORT_TRIES) throw error;
    }
  }
}

function startOn(checked: CheckedOptions, dataDir: string, port: number): Promise<WholeBench> {
  const config = loadConfig(
    {},
    {
      HOST,
      PORT: String(port),
      MQTT_PORT: String(checked.mqttPort),
      LOG_LEVEL: checked.logLevel,
      // A bench forwards to a receiver on localhost, as `parkbench start` does.
      FORWARDING_ALLOW_PRIVATE: 'true',
      // Drivers' passwords hashed at scrypt's lowest cost the API takes: a
      // test registers and logs in drivers by the dozen, and guards nothing.
      SCRYPT_LOG2_N: '10',
      ...(checked.databaseUrl === undefined
        ? { DATABASE_PATH: join(dataDir, 'parkbench.sqlite') }
        : { DATABASE_URL: checked.databaseUrl }),
    },
  );
  const logs = checked.logLevel === 'silent' ? false : { level: checked.logLevel, stream: process.stderr };
  return startWholeBench({
    config,
    mqtt: { mode: 'embedded', host: HOST, port: checked.mqttPort },
    dataDir,
    fresh: false,
    speed: checked.speed,
    ...(checked.accessMode === undefined ? {} : { accessMode: checked.accessMode }),
    apiLogger: logs,
    simLogger: simLogger(logs),
    version: packageVersionNear(import.meta.url),
    portHints: {
      http: 'give another port, or none for a free one',
      mqtt: 'give another mqttPort, or none for a free one',
    },
  });
}

function simLogger(logs: false | { level: string; stream: NodeJS.WritableStream }): Logger {
  if (logs === false) return silentLogger;
  return appLogger(logs)?.child({ component: 'sim' }) ?? silentLogger;
}

/** The option a failure to start is about, named in its message. */
function optionErrorOf(error: unknown, checked: CheckedOptions): Error {
  const databaseOption = checked.databaseUrl === undefined ? 'dataDir' : 'databaseUrl';
  if (error instanceof BenchStartError) {
    const option =
      error.setting === 'database' ? databaseOption : error.setting === 'mqttUrl' ? undefined : error.setting;
    if (option !== undefined) return new BenchOptionError(option, `${option}: ${error.message}`, { cause: error });
  }
  // The demo data refused (its driver taken by another program's data): the database's.
  if (error instanceof DomainError)
    return new BenchOptionError(databaseOption, `${databaseOption}: ${error.message}`, { cause: error });
  return new Error(`startBench: ${messageOf(error)}`, { cause: error });
}
