// `parkbench api`: configuration from the environment and flags (flags win),
// validated before anything starts (bad configuration: one line, exit 2);
// then run/api.ts serves it. How every command reads the database and broker
// settings (configFrom, mqttConnectionOf) is here, loading no server.
import { hostname } from 'node:os';
import type { Command } from 'commander';
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
import { UsageError } from '../errors.js';
import { NO_EXIT_WITH_PARENT } from '../signals.js';
import { freePortOn } from '../../lib/free-port.js';

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
    const { serveApi } = await import('../run/api.js');
    await serveApi(config, {
      mqtt: mqttConnectionOf(config),
      version: program.version() ?? 'unknown',
      exitWithParent: exitWithParent !== false,
    });
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
