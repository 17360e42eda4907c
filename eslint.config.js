// Type-checked linting for the whole package: no floating promises,
// exhaustive switches over unions and enums, strict use of `any`; and the
// import bans of the folder READMEs (`importBans` below).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

// What each folder may import of ours, as its README's "May import" and
// "Must never be imported by" say (docs/architecture.md, "Parts and
// folders"). A relative import that climbs into a folder not listed fails.
// `packages`, where given, lists the only packages the folder may import
// (a name, or a name ending in `*` for a prefix); elsewhere any package.
const ourFolders = [
  'api', 'bench', 'bin', 'cli', 'conformance', 'firmware-protocol', 'gateway', 'lib', 'simulator', 'test',
];
const parts = ['api', 'conformance', 'firmware-protocol', 'gateway', 'lib', 'simulator'];
const importBans = {
  'firmware-protocol': { may: [], packages: ['node:crypto'] },
  lib: { may: ['firmware-protocol'], packages: ['node:*', 'mqtt', 'serialport'] },
  simulator: { may: ['firmware-protocol', 'lib'], packages: ['node:*', 'ws'] },
  gateway: { may: ['firmware-protocol', 'lib'], packages: ['node:*', '@abandonware/noble'] },
  api: { may: ['firmware-protocol', 'lib'] },
  conformance: { may: ['firmware-protocol', 'lib'], packages: ['node:*', 'mqtt'] },
  cli: { may: [...parts] },
  bin: { may: ['cli'] },
  bench: { may: [...parts] },
  test: { may: [...parts, 'cli', 'test'] },
};

// Imports that break a ban today, each allowed in its one file for its one
// specifier, so that any new one fails. Delete an entry with the import it
// allows (test/lint/import-bans.test.ts fails on an entry no file uses).
export const importBanExceptions = {
  'conformance/targets/serial-box-target.ts': [
    // issue 15: the serial target drives a box through the gateway's link.
    '../../gateway/serial/serial-box-link.js',
  ],
  'conformance/targets/ble-box-target.ts': [
    // issue 15: the BLE target drives a box through the gateway's central.
    '../../gateway/ble/ble-central.js',
    '../../gateway/ble/noble.js',
  ],
  'bench/ingest.ts': [
    // issue 15: bench/ borrows test helpers.
    '../test/helpers/free-port.js',
  ],
  'bench/serial.ts': [
    // issue 15: bench/ borrows test helpers.
    '../test/helpers/pty-pair.js',
  ],
  'bench/support/ingest-worker.ts': [
    // issue 15: bench/ borrows test helpers.
    '../../test/helpers/verified-responses.js',
  ],
};

const escapeRegex = (text) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** The `no-restricted-imports` options for a file of `folder`, allowing `allowed` specifiers. */
function restrictedImports(folder, allowed = []) {
  const { may, packages } = importBans[folder];
  const unless = allowed.length > 0 ? `(?!(?:${allowed.map(escapeRegex).join('|')})$)` : '';
  const patterns = ourFolders
    .filter((other) => other !== folder && !may.includes(other))
    .map((other) => ({
      // Climbing out by any number of `../` then into `other`: no folder
      // nests one of these names, so the depth needs no counting.
      regex: `^${unless}(?:\\.\\./)+${escapeRegex(other)}(?:/|$)`,
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
  return ['error', { patterns }];
}

const importBanConfigs = [
  ...Object.keys(importBans).map((folder) => ({
    files: [`${folder}/**/*.ts`, `${folder}/**/*.js`],
    rules: { 'no-restricted-imports': restrictedImports(folder) },
  })),
  ...Object.entries(importBanExceptions).map(([file, allowed]) => ({
    files: [file],
    rules: { 'no-restricted-imports': restrictedImports(file.split('/')[0], allowed) },
  })),
];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'data/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
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
  ...importBanConfigs,
  // No runtime import cycle (issue 15, item 3). import-x skips `import type`;
  // test/lint/no-import-cycle.test.ts checks the graph with type imports too.
  importX.flatConfigs.typescript,
  {
    settings: { 'import-x/resolver-next': [createTypeScriptImportResolver()] },
    rules: { 'import-x/no-cycle': ['error', { ignoreExternal: true }] },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
  },
);
