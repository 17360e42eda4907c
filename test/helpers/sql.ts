// Plain SQL in tests, on either engine: a test that checks or sets a row
// writes the statement once, with `?` placeholders, and it runs on the app's
// store whatever PARKBENCH_TEST_STORE says (PostgreSQL gets them as $1, $2, ...).
// The text must be SQL both engines take (no hex(), no json_each()).
import { CompiledQuery } from 'kysely';
import type { Store } from '../../api/db/store.js';

/** Every row. */
export async function all<Row = Record<string, unknown>>(
  store: Store,
  text: string,
  ...parameters: unknown[]
): Promise<Row[]> {
  const numbered = store.dialect === 'postgres' ? numberedPlaceholders(text) : text;
  return (await store.kysely.executeQuery<Row>(CompiledQuery.raw(numbered, parameters))).rows;
}

/** The first row, or undefined. */
export async function one<Row = Record<string, unknown>>(
  store: Store,
  text: string,
  ...parameters: unknown[]
): Promise<Row | undefined> {
  return (await all<Row>(store, text, ...parameters))[0];
}

/** The first column of every row. */
export async function column<Value = unknown>(store: Store, text: string, ...parameters: unknown[]): Promise<Value[]> {
  return (await all(store, text, ...parameters)).map((row) => Object.values(row)[0] as Value);
}

/** The first column of the first row, or undefined. */
export async function value<Value = unknown>(
  store: Store,
  text: string,
  ...parameters: unknown[]
): Promise<Value | undefined> {
  return (await column<Value>(store, text, ...parameters))[0];
}

/** A statement for its effect. */
export async function run(store: Store, text: string, ...parameters: unknown[]): Promise<void> {
  await all(store, text, ...parameters);
}

/** `?` outside quotes becomes $1, $2, ... */
function numberedPlaceholders(text: string): string {
  let n = 0;
  let quoted = false;
  let out = '';
  for (const character of text) {
    if (character === "'") quoted = !quoted;
    out += character === '?' && !quoted ? `$${++n}` : character;
  }
  return out;
}
