// `npm run docs:settings`: writes the settings table of docs/operations.md
// from the API's table of settings (api/config/settings.ts);
// test/api/config/describe.test.ts fails while the two differ.
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { settingsTable, withSettingsTable } from '../api/config/index.js';

const path = fileURLToPath(new URL('../docs/operations.md', import.meta.url));
const document = await readFile(path, 'utf8');
const written = withSettingsTable(document, settingsTable());
await writeFile(path, written);
process.stdout.write(
  written === document
    ? 'docs/operations.md: settings table unchanged\n'
    : 'docs/operations.md: settings table written\n',
);
