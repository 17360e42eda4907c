// The box as the conformance suite sees it (conformance/box-under-test.ts),
// built from the service's database instead of a provisioning file: the
// same keys by the same rule (lib/provisioning-file.ts `provisioningFile`,
// what `admin box provision` would write now), so a run from the API and a
// run of `parkbench conformance --box <that file>` test the same box.
import { sql } from 'kysely';
import { boxUnderTest, type BoxUnderTest } from '../../conformance/box-under-test.js';
import { parseProvisioning, provisioningFile } from '../../lib/provisioning-file.js';
import { MAX_CONTROL_SEQ } from '../control/index.js';
import type { Executor, Store } from '../db/store.js';
import { notFound, refused } from '../http/domain-error.js';

/** Control sequences a run keeps for itself: a run uses 20 to 25, the
 * revocation-capacity search (a box that holds more than 64 entries) up to
 * about 150; the rest is margin. */
export const RUN_CONTROL_SEQUENCES = 4_096;

/**
 * The box under test. The issuer keys put back when the run ends are the
 * ones the service says the box holds (issuer_key = the pair being installed,
 * else the current one; previous by the same rule as the file): a rotation
 * under way is completed by the put-back rather than undone.
 */
export async function boxUnderTestOf(
  store: Store,
  moduleId: number,
  on: Executor = store.kysely,
): Promise<BoxUnderTest> {
  // PARKINGS owns the boxes' and parkings' repositories: the two rows are small queries of ours.
  const box = await on
    .selectFrom('boxes')
    .select(['module_id', 'parking_id', 'direction', 'mac_address', 'box_key', 'skew_seconds', 'min_battery_mv'])
    .where('module_id', '=', moduleId)
    .executeTakeFirst();
  if (!box) throw notFound(`no box with module id ${moduleId}`);
  const parking = await on
    .selectFrom('secured_parkings')
    .select([
      'access_mode',
      'parking_key',
      'parking_key_next',
      'issuer_public_key',
      'issuer_previous_public_key',
      'issuer_next_public_key',
    ])
    .where('id', '=', box.parking_id)
    .executeTakeFirst();
  if (!parking) throw notFound(`box ${moduleId} belongs to a missing parking ${box.parking_id}`);
  // No MQTT login: the suite reaches the box through the API's broker with its own.
  const file = provisioningFile(box, parking, { url: '', username: '', password: '' });
  return boxUnderTest(parseProvisioning({ ...file, mqtt: null }));
}

/**
 * The run's first control sequence, with the RUN_CONTROL_SEQUENCES after it
 * taken from the box's counter in ONE write (UPDATE ... RETURNING, as
 * control/sequence.ts's `next`), so no other sender (any process) is given
 * one of the run's: the box would answer theirs or the run's REPLAY. (Taken
 * as a `next` then a skip, a dispatcher's `next` between the two got the
 * run's second.) A sender's sequence taken after the block is above it,
 * which the box would take and then refuse the rest of the run: the run's
 * hold (control/holds.ts), taken in the same transaction, keeps those
 * senders away while the run lasts.
 */
// The box's next sequence moves from `first` to `first + RUN_CONTROL_SEQUENCES`;
// `first + RUN_CONTROL_SEQUENCES` must stay a sequence (≤ MAX_CONTROL_SEQ).
export async function reserveControlSequences(
  store: Store,
  moduleId: number,
  on: Executor = store.kysely,
): Promise<number> {
  const taken = RUN_CONTROL_SEQUENCES;
  const row = await on
    .updateTable('boxes')
    .set((eb) => ({ next_control_seq: eb('next_control_seq', '+', taken) }))
    .where('module_id', '=', moduleId)
    .where('next_control_seq', '<=', MAX_CONTROL_SEQ - taken)
    .returning(sql<number>`next_control_seq - ${sql.lit(taken)}`.as('first'))
    .executeTakeFirst();
  if (row !== undefined) return row.first;
  const box = await on
    .selectFrom('boxes')
    .select('next_control_seq')
    .where('module_id', '=', moduleId)
    .executeTakeFirst();
  if (box === undefined) throw notFound(`no box with module id ${moduleId}`);
  if (box.next_control_seq > MAX_CONTROL_SEQ) throw refused(`box ${moduleId} has used every control sequence`);
  throw refused(`box ${moduleId} has too few control sequences left for a conformance run`);
}
