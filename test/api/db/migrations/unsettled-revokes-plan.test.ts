// The read of the boxes at risk (api/boxes/status.ts, unsettledRevokesQuery)
// runs on every snapshot of the bench page and every GET
// /api/operator/parkings: it must find the failed and skipped REVOKEs through
// the partial index made for them, not by reading every control command ever
// delivered. Checked in each engine's own plan.
import test from 'ava';
import { unsettledRevokesQuery } from '../../../../api/operators/box-status.js';
import type { Store } from '../../../../api/db/store.js';
import { storeTests } from '../../../helpers/stores.js';

const storeTest = storeTests(test);
const INDEX = 'control_commands_unsettled_revokes';

async function plan(store: Store, moduleIds?: readonly number[]): Promise<string> {
  const { sql, parameters } = unsettledRevokesQuery(store, moduleIds).compile();
  if (store.dialect === 'sqlite')
    return (store.sqlite.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...parameters) as { detail: string }[])
      .map((row) => row.detail)
      .join('\n');
  const client = await store.pool.connect();
  try {
    await client.query('BEGIN');
    // The test's tables are nearly empty: a sequential scan would be cheaper
    // there; what matters is that the index can serve the read at all.
    await client.query('SET LOCAL enable_seqscan = off');
    const result = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`, [...parameters]);
    return result.rows.map((row) => row['QUERY PLAN']).join('\n');
  } finally {
    await client.query('ROLLBACK');
    client.release();
  }
}

storeTest(
  'the boxes at risk are read through the partial index of unsettled REVOKEs, for every box or some',
  async (t, store) => {
    for (const moduleIds of [undefined, [9101, 9102]]) {
      const shown = await plan(store, moduleIds);
      t.true(shown.includes(INDEX), shown);
    }
  },
);
