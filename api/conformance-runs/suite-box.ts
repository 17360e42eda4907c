// The box as the conformance suite sees it (conformance/box-under-test.ts),
// built from the service's database instead of a provisioning file: the
// same keys by the same rule (lib/provisioning-file.ts `provisioningFile`,
// what `admin box provision` would write now), so a run from the API and a
// run of `parkbench conformance --box <that file>` test the same box.
import { boxUnderTest, type BoxUnderTest } from '../../conformance/box-under-test.js';
import { parseProvisioning, provisioningFile } from '../../lib/provisioning-file.js';
import { ControlSequencesSqlite, MAX_CONTROL_SEQ } from '../control/sequence.js';
import type { Db } from '../db/open.js';
import { notFound, refused } from '../domain-error.js';
import { BoxesSqlite } from '../repositories/boxes.js';
import { ParkingsSqlite } from '../repositories/parkings.js';

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
export function boxUnderTestOf(db: Db, moduleId: number): BoxUnderTest {
  const box = new BoxesSqlite(db).findByModuleId(moduleId);
  if (!box) throw notFound(`no box with module id ${moduleId}`);
  const parking = new ParkingsSqlite(db).findById(box.parking_id);
  if (!parking) throw notFound(`box ${moduleId} belongs to a missing parking ${box.parking_id}`);
  // No MQTT login: the suite reaches the box through the API's broker with its own.
  const file = provisioningFile(box, parking, { url: '', username: '', password: '' });
  return boxUnderTest(parseProvisioning({ ...file, mqtt: null }));
}

/**
 * The run's first control sequence, with the RUN_CONTROL_SEQUENCES after it
 * taken from the box's counter in one write each (control/sequence.ts), so
 * the control dispatcher and the operator's commands never send one of the
 * run's while it lasts: the box would answer theirs or the run's REPLAY.
 */
export function reserveControlSequences(db: Db, moduleId: number): number {
  const sequences = new ControlSequencesSqlite(db);
  const first = sequences.next(moduleId);
  if (first === undefined) throw refused(`box ${moduleId} has used every control sequence`);
  if (first + RUN_CONTROL_SEQUENCES > MAX_CONTROL_SEQ)
    throw refused(`box ${moduleId} has too few control sequences left for a conformance run`);
  sequences.skipTo(moduleId, first + RUN_CONTROL_SEQUENCES);
  return first;
}
