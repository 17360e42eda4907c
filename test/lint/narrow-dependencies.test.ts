// Narrow dependencies: a service, a route or a view
// declares the few things it uses beside it (`*Deps`), and the whole
// AppContext stays with the code that builds and wires it. A module that
// takes the bundle again hides what it touches; this test names it.
import test from 'ava';
import { fileURLToPath } from 'node:url';
import { importGraph, sourceFiles } from '../helpers/import-graph.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** Who may hold the whole context: the composition root (the service, and
 * the HTTP app it builds from the context), and the test and bench helpers
 * that seed a database through its repositories. */
const mayHoldTheContext = new Set([
  'api/service.ts',
  'api/app.ts',
  'test/helpers/api-app.ts',
  'perf/support/api-seed.ts',
]);

/** The files whose import statements name AppContext from api/context.ts. */
function holdersOfTheContext(files: ReadonlyMap<string, string>): string[] {
  const graph = importGraph(files);
  return [...files]
    .filter(
      ([file, text]) =>
        graph.get(file)?.includes('api/context.ts') === true &&
        /import[^;]*\bAppContext\b[^;]*from\s+'[^']*context\.js'/.test(text),
    )
    .map(([file]) => file)
    .sort();
}

test('only the composition root and seeding helpers import AppContext', async (t) => {
  const files = await sourceFiles(root);
  t.true(files.has('api/context.ts'), 'the walk found our sources');
  t.deepEqual(
    holdersOfTheContext(files).filter((file) => !mayHoldTheContext.has(file)),
    [],
  );
});

test('the check names a service that takes the whole context again', (t) => {
  const files = new Map([
    ['api/context.ts', 'export interface AppContext { db: unknown }'],
    [
      'api/sessions/service.ts',
      "import type { AppContext } from '../context.js';\nexport function f(ctx: AppContext) { return ctx; }",
    ],
    ['api/sessions/view.ts', "import { createContext } from '../context.js';"],
  ]);
  t.deepEqual(holdersOfTheContext(files), ['api/sessions/service.ts']);
});
