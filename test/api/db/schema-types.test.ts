// api/db/schema.ts (the tables as Kysely types them) against each store's
// real tables, read by Kysely's own introspection on both engines: the
// same tables, the same columns, `| null` exactly where the column takes
// NULL, and `Generated`/`Defaulted` exactly where the database fills a
// column an insert leaves out. A migration that adds, drops or changes a
// column without the type following fails here.
import { readFileSync } from 'node:fs';
import test from 'ava';
import ts from 'typescript';
import { storeTests } from '../../helpers/stores.js';

const storeTest = storeTests(test);

interface TypedColumn {
  nullable: boolean;
  defaulted: boolean;
}

/** Each table's columns as schema.ts declares them. */
function declaredTables(): Record<string, Record<string, TypedColumn>> {
  const path = new URL('../../../api/db/schema.ts', import.meta.url);
  const source = ts.createSourceFile('schema.ts', readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const interfaces = new Map<string, ts.InterfaceDeclaration>();
  source.forEachChild((node) => {
    if (ts.isInterfaceDeclaration(node)) interfaces.set(node.name.text, node);
  });
  const schema = interfaces.get('Schema');
  if (schema === undefined) throw new Error('schema.ts declares no Schema');
  const tables: Record<string, Record<string, TypedColumn>> = {};
  for (const member of schema.members) {
    if (!ts.isPropertySignature(member) || member.type === undefined) continue;
    const table = member.name.getText(source);
    const declaration = interfaces.get(member.type.getText(source));
    if (declaration === undefined) throw new Error(`${table}: ${member.type.getText(source)} is not declared`);
    const columns: Record<string, TypedColumn> = {};
    for (const column of declaration.members) {
      if (!ts.isPropertySignature(column) || column.type === undefined) continue;
      const type = column.type.getText(source);
      columns[column.name.getText(source)] = {
        nullable: /\|\s*null\b/.test(type),
        defaulted: /^(Generated|Defaulted)</.test(type),
      };
    }
    tables[table] = columns;
  }
  return tables;
}

storeTest(
  'schema.ts types every table and column the migrations made, nullable and defaulted as they are',
  async (t, store) => {
    const declared = declaredTables();
    const real: Record<string, Record<string, TypedColumn>> = {};
    for (const table of await store.kysely.introspection.getTables()) {
      const columns: Record<string, TypedColumn> = {};
      const primaryKeys = new Set(
        store.dialect === 'sqlite'
          ? (store.sqlite.pragma(`table_info(${table.name})`) as { name: string; pk: number }[])
              .filter((column) => column.pk > 0)
              .map((column) => column.name)
          : [],
      );
      for (const column of table.columns) {
        // SQLite's INTEGER PRIMARY KEY is the rowid: it says nullable and filled
        // whether the service chooses the id (smart keys, module ids) or not.
        // PostgreSQL tells the two apart (an identity or a plain key): its run checks them.
        // SQLite also lets any other PRIMARY KEY column hold NULL (a legacy of its own), which none of ours is given.
        const rowid = store.dialect === 'sqlite' && (column.isAutoIncrementing || primaryKeys.has(column.name));
        columns[column.name] = rowid
          ? (declared[table.name]?.[column.name] ?? { nullable: true, defaulted: true })
          : { nullable: column.isNullable, defaulted: column.hasDefaultValue || column.isAutoIncrementing };
      }
      real[table.name] = columns;
    }
    t.deepEqual(Object.keys(declared).sort(), Object.keys(real).sort(), 'the tables');
    for (const [table, columns] of Object.entries(real))
      t.deepEqual(declared[table], columns, `the columns of ${table}`);
  },
);
