// The settings table told to people: one --help line per flag, and the
// settings table of docs/operations.md (test/api/config/describe.test.ts keeps
// the document equal to it; `npm run docs:settings` writes it there).
import { flagName, SETTING_LIST, type ConfigVariable, type Setting } from './settings.js';

/** The commander option of a setting: `--port <value>` and its help line,
 * e.g. "HTTP port (0: any free port) (PORT; default 3000)". */
export function settingOption(variable: ConfigVariable): [flags: string, description: string] {
  const entry = settingOf(variable);
  const shown = plain(entry.shownDefault ?? (entry.default === '' ? 'unset' : entry.default));
  return [`--${flagName(variable)} <value>`, `${plain(firstClause(entry.meaning))} (${variable}; default ${shown})`];
}

/** The Markdown table of docs/operations.md's Configuration section. */
export function settingsTable(): string {
  const rows = SETTING_LIST.map(
    (entry) => `| \`${entry.variable}\` | ${entry.shownDefault ?? shownDefault(entry)} | ${entry.meaning} |`,
  );
  return ['| variable | default | meaning |', '|---|---|---|', ...rows].join('\n');
}

function settingOf(variable: ConfigVariable): Setting<unknown, ConfigVariable> {
  const entry = SETTING_LIST.find((candidate) => candidate.variable === variable);
  if (entry === undefined) throw new Error(`no setting ${variable}`);
  return entry;
}

function shownDefault(entry: Setting<unknown>): string {
  return entry.default === '' ? 'unset' : `\`${entry.default}\``;
}

/** The meaning up to its first "; " or ". " outside parentheses. */
function firstClause(meaning: string): string {
  let depth = 0;
  for (let index = 0; index < meaning.length; index += 1) {
    const char = meaning[index];
    if (char === '(') depth += 1;
    else if (char === ')') depth -= 1;
    else if (depth === 0 && (char === ';' || char === '.') && meaning[index + 1] === ' ')
      return meaning.slice(0, index);
  }
  return meaning;
}

/** Markdown to a terminal's text: links to their words, code marks dropped. */
function plain(markdown: string): string {
  return markdown.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replaceAll('`', '');
}

const TABLE_HEADER = '| variable | default | meaning |';

/** The settings table of `document`: the lines from TABLE_HEADER to the
 * first line that is not a table row. */
export function settingsTableIn(document: string): string {
  const lines = document.split('\n');
  const [start, end] = tableBounds(lines);
  return lines.slice(start, end).join('\n');
}

/** `document` with its settings table replaced by `table`. */
export function withSettingsTable(document: string, table: string): string {
  const lines = document.split('\n');
  const [start, end] = tableBounds(lines);
  return [...lines.slice(0, start), table, ...lines.slice(end)].join('\n');
}

function tableBounds(lines: readonly string[]): [start: number, end: number] {
  const start = lines.indexOf(TABLE_HEADER);
  if (start === -1) throw new Error(`no settings table (a line "${TABLE_HEADER}") in the document`);
  let end = start;
  while (end < lines.length && lines[end]?.startsWith('|') === true) end += 1;
  return [start, end];
}
