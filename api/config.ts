// The API's configuration, as the rest of the code imports it: the table of
// settings (config/settings.ts, each setting written once), their parsers,
// loadConfig and the help and document derived from the table.
export { ConfigError } from './config/parsers.js';
export { parsePostgresUrl, type PostgresUrl } from './config/postgres-url.js';
export { CONFIG_VARIABLES, DEFAULTS, flagName, type ApiConfig, type ConfigVariable } from './config/settings.js';
export { configWith, databaseFlag, databaseShown, loadConfig } from './config/load.js';
export { settingOption, settingsTable, settingsTableIn, withSettingsTable } from './config/describe.js';
