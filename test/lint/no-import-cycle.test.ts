// No import cycle among our modules, type imports included:
// eslint's import-x/no-cycle would catch a runtime cycle but skips `import type`,
// and the cycle the issue names (api/context.ts -> sessions/service.ts ->
// sessions/smart-keys.ts -> context.ts) ran through a type import.
import test from 'ava';
import { fileURLToPath } from 'node:url';
import { importCycles, importGraph, sourceFiles } from '../helpers/import-graph.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

test('no .ts file of ours imports itself back, through any chain of imports (type imports included)', async (t) => {
  const files = await sourceFiles(root);
  t.true(files.has('api/app.ts'), 'the walk found our sources');
  const cycles = importCycles(importGraph(files));
  t.deepEqual(
    cycles.map((cycle) => cycle.join(' -> ')),
    [],
  );
});

test('the checker finds a cycle through a type import, naming its files, and none in a chain', (t) => {
  const cyclic = new Map([
    ['api/a.ts', "import { b } from './b.js';\nexport const a = b;"],
    ['api/b.ts', "import { c } from './sub/c.js';\nexport const b = c;"],
    [
      'api/sub/c.ts',
      "import type { A } from '../a.js';\nimport fastify from 'fastify';\nexport const c: A | undefined = undefined;",
    ],
    ['api/d.ts', "import { a } from './a.js';"],
  ]);
  t.deepEqual(importCycles(importGraph(cyclic)), [['api/a.ts', 'api/b.ts', 'api/sub/c.ts', 'api/a.ts']]);
  t.deepEqual(importCycles(importGraph(new Map([['x.ts', "import './x.js';"]]))), [['x.ts', 'x.ts']]);
  const chain = new Map(
    [...cyclic].map(([file, text]) => [file, file === 'api/sub/c.ts' ? 'export const c = 1;' : text]),
  );
  t.deepEqual(importCycles(importGraph(chain)), []);
});
