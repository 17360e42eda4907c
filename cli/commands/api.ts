// `parkbench api`: configuration from the environment and flags (flags win),
// validated before anything starts (bad configuration: one line, exit 2);
// listens on HOST:PORT; on SIGINT/SIGTERM stops accepting, lets requests in
// flight finish, closes the database and exits 0.
import { hostname } from 'node:os';
import type { Command } from 'commander';
import { appLogger, type AppLoggerOptions } from '../../api/app-logger.js';
import { createService, type Service } from '../../api/service.js';
import type { MqttConnection } from '../../api/mqtt/mqtt-service.js';
import {
  CONFIG_VARIABLES,
  ConfigError,
  databaseFlag,
  flagName,
  loadConfig,
  settingOption,
  type ApiConfig,
  type ConfigVariable,
} from '../../api/config/index.js';
import { DatabaseRefusedError } from '../../api/db/refused.js';
import { CliError, ExitCode, UsageError } from '../errors.js';
import { NO_EXIT_WITH_PARENT, onShutdown } from '../signals.js';
import { freePortOn } from '../../lib/free-port.js';

/** How long shutdown may wait for requests in flight before giving up. */
const SHUTDOWN_GRACE_MS = 10_000;

export function registerApiCommand(program: Command): void {
  const command = program
    .command('api')
    .description('Run the parking access HTTP API (configuration: environment variables or these flags; flags win)');
  for (const variable of CONFIG_VARIABLES) {
    command.option(...settingOption(variable));
  }
  command.option('--database <path or url>', 'same as --database-path, or --database-url for a postgres:// URL');
  command.option(...NO_EXIT_WITH_PARENT);
  command.action(async (options: Record<string, string | boolean | undefined>) => {
    const { exitWithParent, ...flags } = options;
    const config = await withConcretePort(flags as Record<string, string | undefined>);
    await serve(config, program.version() ?? 'unknown', exitWithParent !== false);
  });
}

/** The configuration, with PORT 0 replaced by a free port (see lib/free-port.ts). */
export async function withConcretePort(
  flags: Record<string, string | undefined>,
  commandDefaults: Partial<Record<ConfigVariable, string>> = {},
): Promise<ApiConfig> {
  const config = configFrom(flags, process.env, commandDefaults);
  if (config.port !== 0) return config;
  return configFrom({ ...flags, port: String(await freePortOn(config.host)) }, process.env, commandDefaults);
}

/** Reads flags (camelCase keys from commander) back to variable names;
 * `--database` is a path or a URL (databaseFlag). Every command that opens
 * the database comes here, so one rule decides which (loadConfig). */
export function configFrom(
  flags: Record<string, string | undefined>,
  env: NodeJS.ProcessEnv = process.env,
  commandDefaults: Partial<Record<ConfigVariable, string>> = {},
): ApiConfig {
  const byVariable: Partial<Record<ConfigVariable, string>> = {};
  for (const variable of CONFIG_VARIABLES) {
    const key = flagName(variable).replace(/-([a-z])/g, (_match, letter: string) => letter.toUpperCase());
    const value = flags[key];
    if (value !== undefined) byVariable[variable] = value;
  }
  // --database-path or --database-url, when given too, is the more precise flag.
  if (flags.database !== undefined) Object.assign(byVariable, { ...databaseFlag(flags.database), ...byVariable });
  let config: ApiConfig;
  try {
    config = loadConfig(env, byVariable, commandDefaults);
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(`bad configuration: ${error.message}`);
    throw error;
  }
  return config;
}

function loggerOptions(config: ApiConfig): AppLoggerOptions {
  return {
    level: config.logLevel,
    // Readable on a terminal, JSON otherwise (files, log shippers, tests).
    ...(process.stdout.isTTY
      ? { transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss.l' } } }
      : {}),
    redact: ['req.headers.authorization'],
  };
}

async function serve(config: ApiConfig, version: string, exitWithParent: boolean): Promise<void> {
  // Listening for signals before anything says "listening": whoever waits for
  // that may signal at once. A signal during start-up stops the API once up.
  const stopping = onShutdown({ exitWithParent });
  let service: Service | undefined;
  try {
    service = await createService(config, {
      logger: appLogger(loggerOptions(config)),
      version,
      mqtt: mqttConnectionOf(config),
    });
    await service.app.listen({ host: config.host, port: config.port });
  } catch (error) {
    await service?.close();
    // A database it must not use is the operator's to fix, like a bad setting.
    if (error instanceof DatabaseRefusedError)
      throw new CliError(`cannot start the API: ${error.message}`, ExitCode.usage);
    throw new CliError(`cannot start the API: ${error instanceof Error ? error.message : String(error)}`);
  }
  const running = service.app;
  running.log.info(
    { dashboard_url: `${listeningUrl(running, config.host)}/bench` },
    'the bench page (log in with an operator token: parkbench admin operator add)',
  );
  const reason = await stopping;
  running.log.info({ reason }, 'stopping: finishing requests in flight');
  const timer = setTimeout(() => {
    running.log.error('requests still in flight after the grace period; exiting');
    process.exit(1);
  }, SHUTDOWN_GRACE_MS);
  timer.unref();
  // close() ends the connections idle now; a keep-alive connection whose
  // request was in flight goes idle later and would hold the server open
  // until its keep-alive timeout, so idle ones are swept until closed.
  const sweeper = setInterval(() => running.server.closeIdleConnections(), 50);
  try {
    await running.close();
    running.log.info('stopped');
  } catch (error) {
    running.log.error({ err: error }, 'error while stopping');
    process.exitCode = 1;
  } finally {
    clearInterval(sweeper);
  }
}

/** http://HOST:PORT with the port the server got (PORT 0 picks one). */
function listeningUrl(app: { server: { address(): unknown } }, host: string): string {
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null && 'port' in address ? String(address.port) : '';
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** The embedded broker on HOST:MQTT_PORT, unless MQTT_URL names an external one. */
export function mqttConnectionOf(config: ApiConfig): MqttConnection {
  if (config.mqttUrl === undefined) return { mode: 'embedded', host: config.host, port: config.mqttPort };
  return {
    mode: 'external',
    url: config.mqttUrl,
    sharedGroup: config.mqttSharedGroup,
    // The same on a restart: the broker hands the restarted process what it
    // had routed to the killed one (mqtt-service.ts).
    clientId: config.mqttClientId ?? `parkbench-api-${hostname().replace(/[^A-Za-z0-9.-]/g, '-')}-${config.port}`,
    sessionExpirySeconds: config.mqttSessionExpirySeconds,
    ...(config.mqttUsername === undefined ? {} : { username: config.mqttUsername }),
    ...(config.mqttPassword === undefined ? {} : { password: config.mqttPassword }),
  };
}
