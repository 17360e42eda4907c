// A real database error for one row, on either engine: a trigger that
// refuses the box log of one box_seq, so a test can watch a batch fail in
// its middle (after its neighbours were written) without mocking the store.
import type { Store } from '../../api/db/store.js';
import { run } from './sql.js';

export async function refuseBoxLogInsert(store: Store, boxSeq: number, message: string): Promise<void> {
  if (!Number.isSafeInteger(boxSeq)) throw new Error(`not a box_seq: ${boxSeq}`);
  const quoted = message.replaceAll("'", "''");
  if (store.dialect === 'sqlite') {
    await run(
      store,
      `CREATE TRIGGER refuse_one BEFORE INSERT ON box_logs WHEN NEW.box_seq = ${boxSeq} BEGIN SELECT RAISE(ABORT, '${quoted}'); END`,
    );
    return;
  }
  await run(
    store,
    `CREATE FUNCTION refuse_one() RETURNS trigger LANGUAGE plpgsql AS $body$
     BEGIN
       IF NEW.box_seq = ${boxSeq} THEN RAISE EXCEPTION '${quoted}'; END IF;
       RETURN NEW;
     END $body$`,
  );
  await run(store, 'CREATE TRIGGER refuse_one BEFORE INSERT ON box_logs FOR EACH ROW EXECUTE FUNCTION refuse_one()');
}
