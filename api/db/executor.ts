// What runs a query: the store's Kysely, or a transaction of it. Apart from
// the store (api/db/store.ts re-exports it) so that what the store builds
// (its group commit engines) can name it without importing the store back.
import type { Kysely, Transaction } from 'kysely';
import type { Schema } from './schema.js';

export type Executor = Kysely<Schema> | Transaction<Schema>;
