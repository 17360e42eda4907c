// eslint.config.js lints with typescript-eslint's strict type-checked preset,
// with two options of ours: numbers in template literals,
// shorthand arrows returning void. The rules needing types are read from the
// config a file gets; the others are shown on a snippet (helpers/lint-snippet.ts).
import test from 'ava';
import { ESLint } from 'eslint';
import { fileURLToPath } from 'node:url';
import { snippetLinter } from '../helpers/lint-snippet.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** The rule settings a file of the repository gets, as `[severity, ...options]`. */
async function rulesOf(filePath: string): Promise<Record<string, unknown[]>> {
  const config = (await new ESLint({ cwd: root }).calculateConfigForFile(filePath)) as {
    rules: Record<string, unknown[]>;
  };
  return config.rules;
}

for (const filePath of ['api/x.ts', 'lib/x.ts', 'test/api/x.test.ts']) {
  test(`${filePath}: the strict preset's type-checked rules are on, with our options`, async (t) => {
    const rules = await rulesOf(filePath);
    // Off in recommendedTypeChecked, on in strictTypeChecked.
    for (const rule of [
      'no-unnecessary-condition',
      'no-confusing-void-expression',
      'no-unnecessary-type-conversion',
      'no-meaningless-void-operator',
    ]) {
      t.is(rules[`@typescript-eslint/${rule}`]?.[0], 2, rule);
    }
    t.deepEqual(rules['@typescript-eslint/restrict-template-expressions'], [
      2,
      {
        allowNumber: true,
        allowAny: false,
        allowBoolean: false,
        allowNever: false,
        allowNullish: false,
        allowRegExp: false,
      },
    ]);
    t.like(rules['@typescript-eslint/no-confusing-void-expression'], [2, { ignoreArrowShorthand: true }]);
  });
}

test('a non-null assertion fails (strict, not in the recommended preset)', async (t) => {
  const lint = snippetLinter('@typescript-eslint/no-non-null-assertion');
  t.deepEqual(
    await lint('api/x.ts', "export const first = (values: Map<string, number>): number => values.get('a')!;\n"),
    ['@typescript-eslint/no-non-null-assertion: Forbidden non-null assertion.'],
  );
  t.deepEqual(
    await lint('api/x.ts', "export const first = (values: Map<string, number>): number => values.get('a') ?? 0;\n"),
    [],
  );
});
