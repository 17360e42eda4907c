// The operator's domain lives in api/ services (api/boxes/,
// api/parkings/, api/mqtt/clients.ts, ...); cli/ keeps flags, output and exit
// codes. This reads every file of cli/ for what only domain code does: SQL,
// transactions, repositories, making secrets and hashes. Nothing but the CLI
// itself imports cli/admin/ (the benches and test helpers call api/).
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import test from 'ava';

const root = new URL('../../', import.meta.url).pathname;

function sources(folder: string): string[] {
  return readdirSync(join(root, folder), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)));
}

/** What domain code does and the CLI must not, each with why it is a sign. */
const DOMAIN_SIGNS: [RegExp, string][] = [
  [/\.prepare\s*[(<]/, 'SQL (a repository does it)'],
  [/\.transaction\s*\(/, 'a transaction (a service holds it)'],
  [/\b[A-Z]\w*Repository\b/, 'a repository (a service uses it)'],
  [/\b(randomSecret|randomKeyHex|hashMqttPassword|hashSecret|hashIssuedSecret)\b/, 'making secrets or hashes'],
  [/\bprovisioningFile\s*\(/, 'building a provisioning file'],
];

test('no file of cli/ runs SQL, holds a transaction, uses a repository or makes secrets', (t) => {
  const found: string[] = [];
  for (const file of sources('cli')) {
    const text = readFileSync(join(root, file), 'utf8');
    for (const [sign, what] of DOMAIN_SIGNS) {
      const line = text.split('\n').findIndex((candidate) => sign.test(candidate));
      if (line >= 0) found.push(`${file}:${line + 1}: ${what}`);
    }
  }
  t.deepEqual(found, []);
});

test('perf/, test/ and api/ do not import cli/admin/: the domain they need is in api/', (t) => {
  const found: string[] = [];
  for (const file of [...sources('perf'), ...sources('test'), ...sources('api')]) {
    const text = readFileSync(join(root, file), 'utf8');
    // Import statements only: test/lint/ quotes such imports as snippets to lint.
    if (/^\s*(?:import|export)\b[^;]*from '[./]*cli\/admin\//m.test(text)) found.push(file);
  }
  t.deepEqual(found, []);
});
