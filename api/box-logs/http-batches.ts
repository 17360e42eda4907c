// The POST /api/box_logs batches of one turn of the event loop, stored as
// ONE shared work of the group commit (api/db/group-commit.ts): one
// transaction, the rows they name read once, one insert, one outbox insert,
// one update of the boxes' observations. Why: on PostgreSQL a batch alone
// is about ten round trips and a COMMIT, and batches of one box wait on
// each other for its row until each commits; 20 batches of a turn together
// pay for one. On SQLite, where writes are serialized anyway, they share
// their statements too.
//
// Each batch keeps its own answer: a batch that ingestion refuses (an id
// that names nothing, a log of another driver) is answered its refusal and
// stored nothing, and the others are stored without it, so one client's bad
// batch never costs its neighbours a second run.
import type { Executor } from '../db/store.js';
import type { SharedWork } from '../db/group-commit.js';
import type { BoxLogRefusal } from './errors.js';
import { ingestBoxLogs, loadNamedRows, refusalOf, type BoxLogIngestDeps } from './ingest.js';
import { BoxLogLookups } from './ingest-store.js';
import type { BoxLogInput, BoxLogResult } from './types.js';

/** One POST's batch, from the token's user. */
export interface HttpBatch {
  entries: readonly BoxLogInput[];
  userId: number;
}

export type HttpBatchAnswer = { stored: BoxLogResult[] } | { refused: BoxLogRefusal };

/** At most this many logs in one ingestBoxLogs call (one insert): a turn's
 * batches beyond it are stored by further calls in the same transaction. */
export const LOGS_PER_INSERT = 5_000;

export class HttpBoxLogBatches implements SharedWork<HttpBatch, HttpBatchAnswer> {
  constructor(
    private readonly ctx: BoxLogIngestDeps,
    private readonly logsPerInsert = LOGS_PER_INSERT,
  ) {}

  async runAll(on: Executor, batches: readonly HttpBatch[]): Promise<HttpBatchAnswer[]> {
    const lookups = new BoxLogLookups(this.ctx.ingestStore);
    await loadNamedRows(
      on,
      lookups,
      batches.flatMap((batch) => batch.entries),
    );
    const answers: (HttpBatchAnswer | undefined)[] = batches.map((batch) => {
      const refused = refusalOf(lookups, batch.entries, { source: 'http', userId: batch.userId });
      return refused === undefined ? undefined : { refused };
    });
    let chunk: number[] = [];
    let logs = 0;
    const storeChunk = async (): Promise<void> => {
      if (chunk.length === 0) return;
      const indexes = chunk;
      chunk = [];
      logs = 0;
      // Every batch of the chunk was checked against its own user above.
      const results = await ingestBoxLogs(
        this.ctx,
        on,
        indexes.flatMap((index) => (batches[index] as HttpBatch).entries),
        { source: 'http' },
        lookups,
      );
      let next = 0;
      for (const index of indexes) {
        const size = (batches[index] as HttpBatch).entries.length;
        answers[index] = { stored: results.slice(next, next + size) };
        next += size;
      }
    };
    for (const [index, batch] of batches.entries()) {
      if (answers[index] !== undefined) continue;
      if (logs > 0 && logs + batch.entries.length > this.logsPerInsert) await storeChunk();
      chunk.push(index);
      logs += batch.entries.length;
    }
    await storeChunk();
    return answers as HttpBatchAnswer[];
  }
}
