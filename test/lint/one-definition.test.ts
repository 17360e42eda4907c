// One name, one meaning, one definition: over the source
// of every part, the command line and the benchmarks (test/ is left out: a
// test may write a format out on purpose, as vectors-independent.test.ts
// does), an exported name is declared in one file, and each wire pattern and
// protocol bound is written once, where every user may import it.
import test from 'ava';
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const sourceFolders = [
  'api',
  'bin',
  'cli',
  'conformance',
  'firmware-protocol',
  'gateway',
  'lib',
  'perf',
  'simulator',
  'soak',
  'testing',
  'testkit',
  'whole-bench',
];

/** Every .ts file of the source folders, as `folder/…/file.ts`, with its text. */
async function sources(): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const folder of sourceFolders) {
    const entries = await readdir(`${root}${folder}`, { recursive: true });
    for (const entry of entries.filter((name) => name.endsWith('.ts')).sort()) {
      files.set(`${folder}/${entry}`, await readFile(`${root}${folder}/${entry}`, 'utf8'));
    }
  }
  return files;
}

const EXPORTED_DECLARATION =
  /^export (?:declare )?(?:abstract )?(?:async )?(?:type|interface|class|enum|const|let|function\*?) ([A-Za-z_$][\w$]*)/gm;

/** Names exported from more than one file, with those files. */
function doubles(files: Map<string, string>): Map<string, string[]> {
  const declaredIn = new Map<string, Set<string>>();
  for (const [file, text] of files) {
    for (const match of text.matchAll(EXPORTED_DECLARATION)) {
      const name = match[1] ?? '';
      declaredIn.set(name, (declaredIn.get(name) ?? new Set()).add(file));
    }
  }
  return new Map(
    [...declaredIn].filter(([, where]) => where.size > 1).map(([name, where]) => [name, [...where].sort()]),
  );
}

test('an exported name is declared in one file only', async (t) => {
  const found = doubles(await sources());
  t.deepEqual(
    [...found].map(([name, where]) => `${name}: ${where.join(', ')}`),
    [],
  );
});

// What must be written once, and where: protocol bounds in firmware-protocol/
// (every part may import it), wire-format patterns in lib/ (every part but
// firmware-protocol/, which checks no text).
const writtenOnce: { what: string; written: RegExp; home: string }[] = [
  { what: 'U32_MAX', written: /\bU32_MAX = /, home: 'firmware-protocol/constants.ts' },
  { what: 'U16_MAX', written: /\bU16_MAX = /, home: 'firmware-protocol/constants.ts' },
  { what: 'U8_MAX', written: /\bU8_MAX = /, home: 'firmware-protocol/constants.ts' },
  { what: 'DEFAULT_SKEW_SECONDS', written: /\bDEFAULT_SKEW_SECONDS = /, home: 'firmware-protocol/constants.ts' },
  { what: "the box's direction", written: /'entrance' \| 'exit'/, home: 'firmware-protocol/box.ts' },
  {
    what: 'MqttAccount (who a broker client is)',
    written: /^export (?:type|interface) \w*MqttAccount\b/m,
    home: 'api/mqtt/acl.ts',
  },
  { what: 'the base64 pattern', written: /\[A-Za-z0-9\+\/\]\{4\}/, home: 'lib/wire-patterns.ts' },
  {
    what: 'the MAC address pattern',
    written: /\[0-9A-F\]\{2\}\(:\[0-9A-F\]\{2\}\)\{5\}/i,
    home: 'lib/wire-patterns.ts',
  },
];

for (const { what, written, home } of writtenOnce) {
  test(`${what} is written once, in ${home}`, async (t) => {
    const files = await sources();
    t.deepEqual(
      [...files].filter(([, text]) => written.test(text)).map(([file]) => file),
      [home],
    );
  });
}
