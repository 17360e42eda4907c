// The one row of `parkbench admin demo`'s data (table `demo`): its client
// secret and driver password in clear, so they can be printed again.
import type { Kysely, Selectable } from 'kysely';
import type { DemoTable, Schema } from '../db/schema.js';
import type { Executor, Store } from '../db/store.js';

/** The row but its id (always 1). */
export type DemoRow = Omit<Selectable<DemoTable>, 'id'>;

export class DemoRepository {
  readonly #kysely: Kysely<Schema>;

  constructor(store: Store) {
    this.#kysely = store.kysely;
  }

  find(on: Executor = this.#kysely): Promise<DemoRow | undefined> {
    return on
      .selectFrom('demo')
      .select(['client_app_row_id', 'client_secret', 'user_id', 'driver_password', 'parking_id'])
      .where('id', '=', 1)
      .executeTakeFirst();
  }

  async record(row: DemoRow, on: Executor = this.#kysely): Promise<void> {
    await on
      .insertInto('demo')
      .values({ id: 1, ...row })
      .execute();
  }
}
