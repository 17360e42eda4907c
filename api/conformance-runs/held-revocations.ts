// The revocations the service has sent to a box (REVOKE control commands):
// a run from the operator API tells the suite of them, so the revocation
// list's capacity (conformance/cases/revocation-cases.ts) counts the
// entries the box holds besides the suite's. A REVOKE sent and not yet
// settled may have reached the box, so it counts; one the box refused whole
// (REVOCATION_FULL) left the list as it was, so it does not.
import type { Store } from '../db/store.js';
import type { ControlBody } from '../control/index.js';

/** The `until` of each key id the service revoked on the box (the latest
 * when sent twice): the suite counts the ones still live at its box time. */
export async function heldRevocationsOf(store: Store, moduleId: number): Promise<number[]> {
  const rows = await store.kysely
    .selectFrom('control_commands')
    .select(['body', 'state', 'last_status'])
    .where('module_id', '=', moduleId)
    .where('kind', '=', 'REVOKE')
    .where('control_seq', 'is not', null)
    .execute();
  const untils = new Map<number, number>();
  for (const row of rows) {
    if (row.state !== 'done' && row.last_status === 'REVOCATION_FULL') continue;
    const body = JSON.parse(row.body) as ControlBody;
    if (!('entries' in body)) continue;
    for (const entry of body.entries) untils.set(entry.key_id, Math.max(entry.until, untils.get(entry.key_id) ?? 0));
  }
  return [...untils.values()];
}
