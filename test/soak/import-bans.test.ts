// soak/'s row of the architecture (soak/README.md, "May import"), as
// eslint.config.js enforces it: conformance/, firmware-protocol/, lib/ and
// Node; no other part imports it but cli/ (and the tests, benchmarks and scripts).
import test from 'ava';
import { snippetLinter } from '../helpers/lint-snippet.js';

const importMessages = snippetLinter('no-restricted-imports');

test('soak/ may import conformance/, firmware-protocol/, lib/ and Node', async (t) => {
  t.deepEqual(
    await importMessages(
      'soak/reports/x.ts',
      "import { runSuite } from '../../conformance/run-suite.js';\nimport { parseResponse } from '../../firmware-protocol/index.js';\nimport { sleep } from '../../lib/clock.js';\nimport { readFile } from 'node:fs/promises';",
    ),
    [],
  );
});

for (const [part, code] of [
  ['simulator', "import { Simulation } from '../simulator/simulation.js';"],
  ['api', "import { buildApp } from '../api/app.js';"],
  ['cli', "import { UsageError } from '../cli/errors.js';"],
  ['a package', "import mqtt from 'mqtt';"],
] as const) {
  test(`soak/ may not import ${part}`, async (t) => {
    const messages = await importMessages('soak/x.ts', code);
    t.is(messages.length, 1, messages.join('\n'));
    t.regex(messages[0] ?? '', /soak\/README\.md/);
  });
}

for (const file of ['conformance/x.ts', 'lib/x.ts', 'simulator/x.ts', 'api/x.ts']) {
  test(`${file} may not import soak/`, async (t) => {
    t.is((await importMessages(file, "import { runSoak } from '../soak/run-soak.js';")).length, 1);
  });
}

test('cli/ may import soak/', async (t) => {
  t.deepEqual(await importMessages('cli/run/x.ts', "import { runSoak } from '../../soak/run-soak.js';"), []);
});
