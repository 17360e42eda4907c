// docs/operations.md's settings table is the API's table of settings: a
// setting added, renamed or described anew in api/config/settings.ts without
// `npm run docs:settings` fails here.
import test from 'ava';
import { readFile } from 'node:fs/promises';
import {
  CONFIG_VARIABLES,
  settingOption,
  settingsTable,
  settingsTableIn,
  withSettingsTable,
} from '../../../api/config/index.js';

const operations = new URL('../../../docs/operations.md', import.meta.url);

test('docs/operations.md holds the settings table derived from the settings', async (t) => {
  const document = await readFile(operations, 'utf8');
  t.is(settingsTableIn(document), settingsTable(), 'npm run docs:settings writes it');
});

test('the table has one row per setting, naming its variable', (t) => {
  const rows = settingsTable().split('\n').slice(2);
  t.is(rows.length, CONFIG_VARIABLES.length);
  t.deepEqual(
    rows.map((row) => /^\| `([A-Z0-9_]+)` \|/.exec(row)?.[1]),
    [...CONFIG_VARIABLES],
  );
});

test('a row that differs from the settings is found', (t) => {
  const table = settingsTable();
  const document = `# Operations\n\n${table.replace('| `PORT` | `3000` |', '| `PORT` | `8080` |')}\n\nAfter.\n`;
  t.not(settingsTableIn(document), table);
  t.is(settingsTableIn(withSettingsTable(document, table)), table);
  t.is(withSettingsTable(document, table), `# Operations\n\n${table}\n\nAfter.\n`);
});

test('--help: the first clause of the meaning, the variable and its default, without Markdown', (t) => {
  t.deepEqual(settingOption('PORT'), ['--port <value>', 'HTTP port (0: any free port) (PORT; default 3000)']);
  t.deepEqual(settingOption('LOG_LEVEL'), [
    '--log-level <value>',
    'pino level (silent to stop logs) (LOG_LEVEL; default info)',
  ]);
  t.deepEqual(settingOption('PUBLIC_URL'), [
    '--public-url <value>',
    'base of links given to phones (PUBLIC_URL; default http://HOST:PORT)',
  ]);
  t.deepEqual(
    settingOption('FORWARDING_TIMEOUT_MS')[1],
    'longest a forwarding attempt may take, connection to status line (1000 to 300000) (FORWARDING_TIMEOUT_MS; default 15000)',
  );
});
