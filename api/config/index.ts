// The API's configuration, as the rest of the code imports it: the table of
// settings (config/settings.ts, each setting written once), their parsers,
// loadConfig and the help and document derived from the table.
export { ConfigError } from './parsers.js';
export { parsePostgresUrl, type PostgresUrl } from './postgres-url.js';
export { CONFIG_VARIABLES, DEFAULTS, flagName, type ApiConfig, type ConfigVariable } from './settings.js';
export { configWith, databaseFlag, databaseShown, loadConfig } from './load.js';
export { settingOption, settingsTable, settingsTableIn, withSettingsTable } from './describe.js';
