// `parkbench start` (`npm start`): the whole bench in one process, on
// embedded defaults, until Ctrl-C. Prints where everything is and, last, one
// machine-readable line: `parkbench ready {json}`.
import { join } from 'node:path';
import type { Command } from 'commander';
import type { AppLoggerOptions } from '../../api/app-logger.js';
import { mqttConnectionOf, withConcretePort } from './api.js';
import { settingOption } from '../../api/config/index.js';
import type { ReadyInfo } from '../../whole-bench/index.js';
import { UsageError } from '../errors.js';
import { NO_EXIT_WITH_PARENT, onShutdown } from '../signals.js';

interface StartFlags {
  host?: string;
  port?: string;
  mqttPort?: string;
  dataDir: string;
  fresh?: boolean;
  speed: string;
  logLevel: string;
  mqttUrl?: string;
  mqttUsername?: string;
  mqttPassword?: string;
  mqttAclOut?: string;
  databaseUrl?: string;
  database?: string;
  exitWithParent: boolean;
}

export function registerStartCommand(program: Command): void {
  program
    .command('start')
    .description('Run the whole bench: the API with its MQTT broker, demo data, and simulated entrance and exit boxes')
    .option(...settingOption('HOST'))
    .option(...settingOption('PORT'))
    .option(...settingOption('MQTT_PORT'))
    .option(
      '--data-dir <dir>',
      "where the boxes' state lives, and the SQLite file unless DATABASE_URL or DATABASE_PATH names the database",
      'data',
    )
    .option(
      '--database <path or url>',
      'the SQLite file, or a postgres:// URL (default: DATABASE_URL, else DATABASE_PATH, else DATA_DIR/parkbench.sqlite)',
    )
    .option(
      '--mqtt-url <url>',
      'an external broker instead of the embedded one (or MQTT_URL); the bench checks it takes its accounts first',
    )
    .option(...settingOption('MQTT_USERNAME'))
    .option(...settingOption('MQTT_PASSWORD'))
    .option(
      '--mqtt-acl-out <dir>',
      "with --mqtt-url: write mosquitto's password_file and acl_file of the bench's accounts here",
    )
    .option(...settingOption('DATABASE_URL'))
    .option('--fresh', 'start over with an empty database and new boxes')
    .option('--speed <n>', 'run the simulated boxes this many times faster', '1')
    .option(
      '--log-level <level>',
      'logs on stderr: fatal, error, warn, info, debug, trace or silent',
      process.env.LOG_LEVEL ?? 'warn',
    )
    .option(...NO_EXIT_WITH_PARENT)
    .action(async (flags: StartFlags) => {
      const [{ startCliBench }, { createCliLogger, parseLogLevel }] = await Promise.all([
        import('../start/bench.js'),
        import('../logger.js'),
      ]);
      const logLevel = parseLogLevel(flags.logLevel);
      if (flags.mqttAclOut !== undefined && (flags.mqttUrl ?? process.env.MQTT_URL ?? '') === '')
        throw new UsageError('--mqtt-acl-out goes with an external broker (--mqtt-url or MQTT_URL)');
      const speed = Number(flags.speed);
      if (!Number.isFinite(speed) || speed <= 0 || speed > 10_000)
        throw new UsageError(`--speed must be a number above 0 and at most 10000, got "${flags.speed}"`);
      const config = await withConcretePort(
        {
          host: flags.host,
          port: flags.port,
          mqttPort: flags.mqttPort,
          database: flags.database,
          databaseUrl: flags.databaseUrl,
          logLevel,
          // The embedded broker unless an external one is named (the flag, or MQTT_URL).
          mqttUrl: flags.mqttUrl,
          mqttUsername: flags.mqttUsername,
          mqttPassword: flags.mqttPassword,
        },
        {
          // The database as every command finds it (api/config/load.ts), this
          // command's default file under its data folder.
          DATABASE_PATH: join(flags.dataDir, 'parkbench.sqlite'),
          // A bench forwards to a receiver on localhost: allowed here unless
          // the environment says otherwise (parkbench api refuses by default).
          FORWARDING_ALLOW_PRIVATE: 'true',
        },
      );
      // --fresh deletes the bench's SQLite file; a server database may hold
      // more than the bench, so parkbench never empties one.
      if (flags.fresh === true && config.databaseUrl !== undefined)
        throw new UsageError(
          "--fresh empties the bench's SQLite file, not a PostgreSQL database: drop and create the database yourself (dropdb, createdb), or start without --fresh",
        );
      const bench = await startCliBench({
        config,
        mqtt: mqttConnectionOf(config),
        dataDir: flags.dataDir,
        fresh: flags.fresh === true,
        speed,
        apiLogger: apiLogger(logLevel),
        simLogger: createCliLogger(logLevel, 'parkbench-sim'),
        version: program.version() ?? 'unknown',
        ...(flags.mqttAclOut === undefined ? {} : { mqttAclOut: flags.mqttAclOut }),
      });
      // Listening before saying ready: whoever reads the ready line may signal at once.
      const stopping = onShutdown({ exitWithParent: flags.exitWithParent });
      process.stdout.write(banner(bench.info));
      process.stdout.write(`parkbench ready ${JSON.stringify(bench.info)}\n`);
      const reason = await stopping;
      process.stderr.write(`parkbench: ${reason}: stopping the boxes, the broker and the API\n`);
      await bench.stop();
    });
}

/** The API's logs go to stderr, so stdout ends with the ready line. */
function apiLogger(level: string): AppLoggerOptions {
  if (level === 'silent') return false;
  if (process.stderr.isTTY)
    return {
      level,
      transport: {
        target: 'pino-pretty',
        options: { destination: 2, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' },
      },
    };
  return { level, stream: process.stderr };
}

function banner(info: ReadyInfo): string {
  const listed = (simulated: boolean) =>
    info.boxes
      .filter((box) => box.simulated === simulated)
      .map((box) => `${box.module_id} (${box.direction})`)
      .join(', ');
  const [simulated, real] = [listed(true), listed(false)];
  const boxes =
    [
      simulated === '' ? '' : `boxes ${simulated}, simulated on MQTT`,
      real === '' ? '' : `real boxes ${real}, not simulated`,
    ]
      .filter((part) => part !== '')
      .join('; ') || 'no boxes';
  return [
    '',
    'parkbench is running: the API, its MQTT broker and simulated boxes.',
    '',
    `  API          ${info.api_url}`,
    `  API docs     ${info.docs_url}`,
    `  dashboard    ${info.dashboard_url}`,
    '               (the bench page, logged in as operator "bench"; a new login each start)',
    `  MQTT         ${info.mqtt_url}   operator account: ${info.mqtt_operator.username} / ${info.mqtt_operator.password}`,
    `  database     ${info.database}`,
    `  parking      ${info.parking_id}, ${boxes}`,
    `  client app   client_app_id ${info.client_app_id}`,
    `               client_secret ${info.client_secret}`,
    `  driver       ${info.driver.email} / ${info.driver.password}`,
    '',
    'Get a token:',
    `  ${info.token_curl}`,
    '',
    'Play the phone app from start to finish (session, entrance, payment, exit):',
    `  npx parkbench app --server ${info.api_url} --mqtt ${info.mqtt_url} --mqtt-username ${info.mqtt_operator.username} --mqtt-password ${info.mqtt_operator.password} \\`,
    `    --client-app-id ${info.client_app_id} --client-secret ${info.client_secret} --email ${info.driver.email} --password ${info.driver.password} --parking ${info.parking_id}`,
    '',
    'Ctrl-C stops everything.',
    '',
  ].join('\n');
}
