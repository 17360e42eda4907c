// What .ci/run runs, and in which order: the build right after the typecheck,
// and the suite once, under c8, with the coverage summary printed and lcov
// written into coverage/ (no threshold). The suite runs on the compiled
// command line, so npm test and npm run coverage build first.
import test from 'ava';
import { readFile, stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const read = (path: string) => readFile(`${root}${path}`, 'utf8');

/** The commands of .ci/run's body: its lines that run an npm script. */
async function ciNpmCommands(): Promise<string[]> {
  const lines = (await read('.ci/run')).split('\n');
  return lines.map((line) => line.trim()).filter((line) => /^npm (run|test|ci)\b/.test(line));
}

const COVERAGE_PASS = 'pass timeout --kill-after=60 45m npm run coverage --';

test('CI builds after the typecheck and before lint', async (t) => {
  const commands = await ciNpmCommands();
  const at = (prefix: string) => commands.findIndex((command) => command.startsWith(prefix));
  t.true(at('npm run typecheck') >= 0, commands.join('\n'));
  t.is(at('npm run build'), at('npm run typecheck') + 1, commands.join('\n'));
  t.true(at('npm run lint') > at('npm run build'));
});

test("CI installs Debian's chromium and tshark with apt-get beside socat and mosquitto (the bench page's browser tests, the Wireshark dissector's)", async (t) => {
  const script = await read('.ci/run');
  for (const pkg of ['socat', 'mosquitto', 'mosquitto-clients', 'chromium', 'tshark'])
    t.true(script.includes(`need+=(${pkg})`), `${pkg} is installed when missing`);
  t.regex(script, /apt-get install -y[^\n]*"\$\{need\[@\]\}"/);
  // tshark's package asks a debconf question: answered before the install, which runs non-interactive.
  t.true(
    script.includes(
      "echo 'wireshark-common wireshark-common/install-setuid boolean false' | $SUDO debconf-set-selections",
    ),
  );
  t.regex(script, /DEBIAN_FRONTEND=noninteractive \$SUDO apt-get install/);
});

test('CI checks the formatting with the same prettier as npm run format, after lint', async (t) => {
  const commands = await ciNpmCommands();
  t.true(commands.indexOf('npm run format:check') > commands.indexOf('npm run lint'), commands.join('\n'));
  const manifest = JSON.parse(await read('package.json')) as { scripts: Record<string, string> };
  t.is(manifest.scripts['format:check'], 'prettier --check .');
  t.is(manifest.scripts['format'], 'prettier --write .');
});

test("CI runs the suite under c8, then the API's tests again with the test apps on PostgreSQL, and counts both from their TAP summaries", async (t) => {
  const script = await read('.ci/run');
  const passes = script
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => /\bpass (timeout .+ )?npm\b/.test(line));
  // Each pass under a time limit: a hung test fails the run rather than holding it.
  t.deepEqual(passes, [
    COVERAGE_PASS,
    'PARKBENCH_TEST_STORE=postgres pass timeout --kill-after=60 25m npm test -- "${app_files[@]}"',
  ]);
  // Every folder with an app in its tests runs again; the others are named.
  const excluded = [...script.matchAll(/-not -path '(test\/[\w/]+)\/\*'/g)].map((match) => match[1]);
  t.deepEqual(excluded, [
    'test/protocol',
    'test/simulator',
    'test/lib',
    'test/lint',
    'test/api/db',
    'test/e2e',
    'test/testing',
  ]);
  t.regex(script, /"\$@" --tap \| tee "\$tap"/);
  t.regex(script, /echo "\$total_passed passed, \$total_failed failed"/);
});

test('npm run coverage is c8 over the same ava as npm test', async (t) => {
  const manifest = JSON.parse(await read('package.json')) as {
    scripts: Record<string, string>;
    devDependencies: Record<string, string>;
  };
  // Both build dist/ first (the tests spawn the compiled CLI; incremental, so a
  // build with nothing changed takes seconds), then run through
  // scripts/with-postgres.ts: one PostgreSQL server for the whole run.
  t.is(manifest.scripts['test'], 'npm run build && tsx scripts/with-postgres.ts ava');
  t.is(manifest.scripts['coverage'], 'npm run build && tsx scripts/with-postgres.ts c8 ava');
  t.regex(manifest.devDependencies['c8'] ?? '', /^\^\d+\.\d+\.\d+$/);
  const lock = JSON.parse(await read('package-lock.json')) as {
    packages: Record<string, { version?: string; dev?: boolean; devDependencies?: Record<string, string> }>;
  };
  t.is(
    lock.packages['']?.devDependencies?.['c8'],
    manifest.devDependencies['c8'],
    'package-lock.json is in step (npm ci)',
  );
  t.truthy(lock.packages['node_modules/c8']?.version);
});

test('c8 prints a summary and writes lcov into coverage/, which git ignores, with no threshold', async (t) => {
  const options = JSON.parse(await read('.c8rc.json')) as Record<string, unknown>;
  t.deepEqual(options['reporter'], ['text-summary', 'lcov']);
  t.is(options['reportsDir'], 'coverage');
  // The compiled CLI the tests spawn counts, mapped back to its TypeScript by the build's source maps.
  t.true((options['include'] as string[]).includes('dist/**'));
  t.deepEqual(options['extension'], ['.ts', '.js']);
  for (const threshold of ['check-coverage', 'checkCoverage', 'lines', 'branches', 'functions', 'statements']) {
    t.false(threshold in options, `${threshold} in .c8rc.json`);
  }
  t.true((await read('.gitignore')).split('\n').includes('coverage/'));
});

test("CI installs Debian's postgresql when its server binaries are missing, and starts no server itself", async (t) => {
  const ci = await read('.ci/run');
  // The test helper finds the binaries where the package puts them (testkit/postgres-server.ts, postgresBinDir).
  t.regex(ci, /compgen -G '\/usr\/lib\/postgresql\/\*\/bin\/initdb' >\/dev\/null \|\| need\+=\(postgresql\)/);
  t.notRegex(ci, /pg_ctl|pg_ctlcluster|service postgresql|systemctl/);
});

test('CI checks the packed tarball in a temporary project, after the build and before the suite', async (t) => {
  const lines = (await read('.ci/run')).split('\n').map((line) => line.trim());
  const check = lines.indexOf('.ci/pack-check');
  t.true(check > lines.indexOf('npm run build'), lines.join('\n'));
  t.true(check < lines.indexOf(COVERAGE_PASS));

  const script = await read('.ci/pack-check');
  t.true(script.startsWith('#!/usr/bin/env bash\n'));
  t.regex(script, /^set -euo pipefail$/m);
  t.true(((await stat(`${root}.ci/pack-check`)).mode & 0o111) !== 0, 'executable, as .ci/run runs it');
  // The tarball goes to a temporary folder, and is installed there, never in the repository.
  t.regex(script, /^work="\$\(mktemp -d /m);
  t.regex(script, /^npm pack --pack-destination "\$work"/m);
  const enters = script.indexOf('cd "$project"');
  t.true(enters > 0 && enters < script.indexOf('npm install'), 'npm install runs in the temporary project');
  t.regex(script, /npm install --no-audit --no-fund "\$tarball"/);
  t.regex(script, /^trap cleanup EXIT$/m);
  // Each runner of examples/, then the CLI from the installed package.
  t.regex(script, /^for runner in node ava vitest jest; do$/m);
  const examples = JSON.parse(await read('examples/package.json')) as { scripts: Record<string, string> };
  for (const [runner, file] of [
    ['node', 'node-test.test.js'],
    ['ava', 'ava.test.js'],
    ['vitest', 'vitest.test.js'],
    ['jest', 'jest.test.js'],
  ] as const) {
    t.true(examples.scripts[`test:${runner}`]?.endsWith(` ${file}`), `test:${runner} runs ${file}`);
  }
  t.regex(script, /npx --no-install parkbench --help/);
  t.regex(script, /npx --no-install parkbench start /);
});

test('CI builds libparkbox with gcc and clang, runs its tests and fuzzers, before the suite, and installs its toolchain when missing', async (t) => {
  const ci = await read('.ci/run');
  const lines = ci.split('\n').map((line) => line.trim());
  const libparkbox = lines.indexOf('.ci/libparkbox');
  t.true(libparkbox > lines.indexOf('npm run lint:links'), lines.join('\n'));
  t.true(libparkbox < lines.indexOf(COVERAGE_PASS));
  for (const need of ['cmake', 'gcc', 'libmbedtls-dev', 'clang', 'libclang-rt-14-dev', 'llvm'])
    t.regex(ci, new RegExp(`need\\+=\\(${need}\\)`), need);
  const script = await read('.ci/libparkbox');
  t.regex(script, /^set -euo pipefail$/m);
  t.true(((await stat(`${root}.ci/libparkbox`)).mode & 0o111) !== 0, 'executable, as .ci/run runs it');
  t.regex(script, /^ctest --test-dir libparkbox\/build --output-on-failure$/m);
  t.regex(script, /^CC=clang cmake -S libparkbox -B libparkbox\/build-fuzz -DPB_FUZZ=ON$/m);
  t.regex(script, /-max_total_time="\$FUZZ_SECONDS"/);
  t.regex(script, /^node libparkbox\/tools\/seed-corpus\.mjs "\$corpus"$/m);
});
