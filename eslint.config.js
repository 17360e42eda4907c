// Type-checked linting for the whole package (typescript-eslint strict): no floating promises,
// exhaustive switches over unions and enums, strict use of `any`; and the
// import bans of the folder READMEs (`importBans` below).
import { readdirSync } from 'node:fs';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// What each folder may import of ours, as its README's "May import" and
// "Must never be imported by" say (docs/architecture.md, "Parts and
// folders"). A relative import that climbs into a folder not listed fails,
// whether a declaration (`import … from`, `export … from`) or an
// `import('…')` with a literal specifier (`no-restricted-dynamic-imports`
// below: the command line loads most modules that way). `dist/`, the build,
// is bin/'s alone. `packages`, where given, lists the only packages the
// folder may import (a name, or a name ending in `*` for a prefix);
// elsewhere any package.
const ourFolders = [
  'api',
  'bin',
  'cli',
  'conformance',
  'dist',
  'examples',
  'firmware-protocol',
  'gateway',
  'lib',
  'perf',
  'scripts',
  'simulator',
  'soak',
  'test',
  'testing',
  'testkit',
  'web',
  'whole-bench',
];
const parts = ['api', 'conformance', 'firmware-protocol', 'gateway', 'lib', 'simulator', 'soak'];
const importBans = {
  'firmware-protocol': { may: [], packages: ['node:crypto'] },
  // @abandonware/noble: the BLE link the gateway and the conformance suite
  // share (lib/ble-central.ts), loaded lazily by lib/noble.ts. yaml and ajv:
  // the bench file (lib/bench/), read by conformance, power, gateway and soak.
  lib: {
    may: ['firmware-protocol'],
    packages: ['node:*', 'mqtt', 'mqtt-packet', 'serialport', '@abandonware/noble', 'yaml', 'ajv'],
  },
  simulator: { may: ['firmware-protocol', 'lib'], packages: ['node:*', 'ws'] },
  gateway: { may: ['firmware-protocol', 'lib'], packages: ['node:*'] },
  api: { may: ['firmware-protocol', 'lib'] },
  // The one folder of api/ that runs the conformance suite (a run from the
  // operator API): it alone of api/ may import conformance/, so the
  // API builds a BoxUnderTest from its database and writes the CLI's own
  // reports. Named so no other folder nests `conformance`, which the
  // climbing regex below would take for the top-level one.
  'api/conformance-runs': { may: ['api', 'firmware-protocol', 'lib', 'conformance'] },
  conformance: { may: ['firmware-protocol', 'lib'], packages: ['node:*', 'mqtt'] },
  // Endurance runs (`parkbench soak`): the conformance suite's targets,
  // box, issuers and put-back, driven again and again; yaml reads --limits FILE.
  soak: { may: ['conformance', 'firmware-protocol', 'lib'], packages: ['node:*', 'yaml'] },
  // The whole bench in one process (the API, its broker, the demo data, the
  // simulated boxes), which `parkbench start` runs and `testing/` starts.
  'whole-bench': { may: ['api', 'firmware-protocol', 'lib', 'simulator'], packages: ['node:*', 'mqtt'] },
  cli: { may: [...parts, 'whole-bench'] },
  // The compiled command line (dist/cli/main.js), built from cli/ by `npm run build`.
  bin: { may: ['dist'] },
  // What tests and benchmarks start and only they use: a PostgreSQL server,
  // mosquitto, chromium's launch options, a pty pair. Never product code.
  testkit: { may: ['lib'], packages: ['node:*', 'mqtt'] },
  perf: { may: [...parts, 'testkit', 'testing'] },
  // `parkbench/testing`, the package's entry point for test suites: the
  // whole bench and what its helpers read; no product code imports it.
  testing: { may: ['api', 'lib', 'whole-bench'], packages: ['node:*'] },
  // Test files as a user writes them: parkbench by its package name only.
  examples: { may: [] },
  // Developer tools (the page's build, the screenshots): like the benchmarks.
  scripts: { may: [...parts, 'testkit'] },
  // The bench page runs in a browser: its view layer and charts, nothing of ours.
  web: { may: [], packages: ['preact', 'uplot'] },
  // web/: the page's payload types, held to the API's (test/bench-page/payload-types.ts).
  test: { may: [...parts, 'cli', 'test', 'testing', 'testkit', 'web', 'whole-bench'] },
};

const escapeRegex = (text) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** The `no-restricted-imports` options for a file of `folder`, with
 * `extraPatterns` of its own. No file is excepted: what two folders share
 * lives where both may import it. */
function restrictedImports(folder, extraPatterns = []) {
  const { may, packages } = importBans[folder];
  const patterns = ourFolders
    .filter((other) => other !== folder && !may.includes(other))
    .map((other) => ({
      // Climbing out by any number of `../` then into `other`: no folder
      // nests one of these names, so the depth needs no counting.
      regex: `^(?:\\.\\./)+${escapeRegex(other)}(?:/|$)`,
      message: `${folder}/ must not import ${other}/: see ${folder}/README.md, "May import".`,
    }));
  if (packages) {
    const names = packages.map((name) =>
      name.endsWith('*') ? escapeRegex(name.slice(0, -1)) : `${escapeRegex(name)}(?:/|$)`,
    );
    patterns.push({
      regex: `^(?!\\.|(?:${names.join('|')}))`,
      message: `${folder}/ imports only the packages ${packages.join(', ')}: see ${folder}/README.md, "May import".`,
    });
  }
  return ['error', { patterns: [...patterns, ...extraPatterns] }];
}

/** The same patterns for `import('…')` and `import(\`…\`)` with a constant
 * specifier, which `no-restricted-imports` does not read. */
const noRestrictedDynamicImports = {
  meta: {
    type: 'problem',
    docs: { description: "no-restricted-imports' patterns, for import() with a constant specifier" },
    schema: [{ type: 'object', properties: { patterns: { type: 'array' } }, additionalProperties: false }],
  },
  create(context) {
    const patterns = context.options[0].patterns.map(({ regex, message }) => ({ regex: new RegExp(regex), message }));
    return {
      ImportExpression(node) {
        const { source } = node;
        const specifier =
          source.type === 'Literal'
            ? source.value
            : source.type === 'TemplateLiteral' && source.expressions.length === 0
              ? source.quasis[0]?.value.cooked
              : undefined;
        if (typeof specifier !== 'string') return;
        const banned = patterns.find(({ regex }) => regex.test(specifier));
        if (banned) context.report({ node: source, message: `'${specifier}' import is restricted. ${banned.message}` });
      },
    };
  },
};

/** Both rules, static and dynamic imports, from one set of patterns. */
function importBanRules(folder, extraPatterns = []) {
  const restricted = restrictedImports(folder, extraPatterns);
  return {
    'no-restricted-imports': restricted,
    'parkbench/no-restricted-dynamic-imports': restricted,
  };
}

const importBanConfigs = Object.keys(importBans).map((folder) => ({
  files: [`${folder}/**/*.ts`, `${folder}/**/*.tsx`, `${folder}/**/*.js`],
  rules: importBanRules(folder),
}));

// api/ by feature (api/README.md, "Features"): every folder of api/ is a
// feature but the shared layers, which import no feature; a feature, and the
// composition root (app.ts, context.ts, service.ts), import another feature
// only through its index.ts; nothing in a folder imports the composition
// root. The patterns count the `../` of each depth exactly, so that a file
// of a feature named like another (sessions/service.ts) is never taken for it.
const apiSharedLayers = ['config', 'db', 'events', 'http'];
const apiFolders = readdirSync(`${import.meta.dirname}/api`, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);
const apiFeatures = apiFolders.filter((name) => !apiSharedLayers.includes(name));
const apiCompositionRoot = ['app', 'app-logger', 'context', 'service'];
const FEATURES_README = 'see api/README.md, "Features"';

function featureImportPatterns(folder, up) {
  const climb = escapeRegex('../'.repeat(up));
  const patterns = [
    {
      regex: `^${climb}(?:${apiCompositionRoot.join('|')})\\.js$`,
      message: `api/${folder}/ must not import the composition root (app.ts, context.ts, service.ts): ${FEATURES_README}.`,
    },
  ];
  for (const feature of apiFeatures) {
    if (feature === folder) continue;
    patterns.push(
      apiSharedLayers.includes(folder)
        ? {
            regex: `^${climb}${escapeRegex(feature)}/`,
            message: `api/${folder}/ is a shared layer and imports no feature (api/${feature}/): ${FEATURES_README}.`,
          }
        : {
            regex: `^${climb}${escapeRegex(feature)}/(?!index\\.js$)`,
            message: `api/${folder}/ imports api/${feature}/ only through api/${feature}/index.ts: ${FEATURES_README}.`,
          },
    );
  }
  return patterns;
}

const featureImportConfigs = [
  {
    files: ['api/*.ts'],
    rules: importBanRules(
      'api',
      apiFeatures.map((feature) => ({
        regex: `^\\./${escapeRegex(feature)}/(?!index\\.js$)`,
        message: `The composition root imports api/${feature}/ only through api/${feature}/index.ts: ${FEATURES_README}.`,
      })),
    ),
  },
  ...apiFolders.flatMap((folder) =>
    [1, 2, 3].map((depth) => ({
      files: [`api/${folder}/${'*/'.repeat(depth - 1)}*.ts`],
      rules: importBanRules(
        folder === 'conformance-runs' ? 'api/conformance-runs' : 'api',
        featureImportPatterns(folder, depth),
      ),
    })),
  ),
];

// A thrown value may be no Error at all (a string, a plain object), so its
// message is read with lib/message-of.ts `messageOf(error)`, never through a
// cast to Error (test/lint/message-of.test.ts).
const messageOfConfig = {
  files: ['**/*.ts'],
  rules: {
    'no-restricted-syntax': [
      'error',
      {
        selector:
          "MemberExpression[property.name='message'] > TSAsExpression.object[typeAnnotation.typeName.name='Error']",
        message: 'A thrown value may be no Error: read its message with messageOf(error) from lib/message-of.ts.',
      },
    ],
  },
};

export default tseslint.config(
  { ignores: ['**/dist/**', 'node_modules/**', 'data/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  { plugins: { parkbench: { rules: { 'no-restricted-dynamic-imports': noRestrictedDynamicImports } } } },
  {
    languageOptions: {
      parserOptions: {
        projectService: {
          allowDefaultProject: ['eslint.config.js', 'bin/*.js', '.remarkrc.mjs'],
        },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': [
        'error',
        { considerDefaultExhaustiveForUnions: true, requireDefaultForNonUnion: false },
      ],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      eqeqeq: ['error', 'always'],
    },
  },
  // Options of the strict preset, each kept narrow.
  {
    rules: {
      // Numbers format the same way everywhere (ports, counts, ids, byte
      // lengths are the bulk of our messages); anything else in a template,
      // `undefined`, `null`, an object, still has to be turned into text on
      // purpose. The other options are the preset's, written out because a
      // rule's options replace the preset's whole (the rule's own defaults
      // would allow all of them).
      '@typescript-eslint/restrict-template-expressions': [
        'error',
        {
          allowNumber: true,
          allowAny: false,
          allowBoolean: false,
          allowNever: false,
          allowNullish: false,
          allowRegExp: false,
        },
      ],
      // `() => resolve()`, `() => t.throws(...)`, `(x) => socket.write(x)`:
      // a shorthand arrow returning void hides nothing, its caller ignores
      // the result; a `return voidCall()` in a block body is still flagged.
      '@typescript-eslint/no-confusing-void-expression': ['error', { ignoreArrowShorthand: true }],
    },
  },
  ...importBanConfigs,
  ...featureImportConfigs,
  messageOfConfig,
  {
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
  },
  // examples/ are plain JavaScript run by Node: the global it uses.
  { files: ['examples/**/*.js'], languageOptions: { globals: { fetch: 'readonly' } } },
);
