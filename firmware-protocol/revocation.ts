// The box's revocation list (docs/protocol.md, steps 6 and 8a): key_id ->
// until. An entry is live while until + skew is at or after box_time.
import type { RevokeEntry } from './command-body.js';

export type RevocationList = ReadonlyMap<number, number>;

/** docs/protocol.md, step 8a: the key_id is listed and its until + skew >= box_time. */
export function isRevoked(list: RevocationList, keyId: number, boxTime: number, skew: number): boolean {
  const until = list.get(keyId);
  return until !== undefined && until + skew >= boxTime;
}

/** docs/protocol.md, step 6, REVOKE: first forget the entries whose until + skew is
 * before box_time, then add the new entries (an id already listed, or listed
 * twice in the command, keeps the later until). Returns the new list, or null
 * when they would not all fit in `capacity` (REVOCATION_FULL: the caller keeps
 * the list as it was, the forgetting included, "nothing changed"). */
export function applyRevoke(
  list: RevocationList,
  entries: readonly RevokeEntry[],
  boxTime: number,
  skew: number,
  capacity: number,
): Map<number, number> | null {
  const next = new Map<number, number>();
  for (const [keyId, until] of list) if (until + skew >= boxTime) next.set(keyId, until);
  for (const { keyId, until } of entries) {
    const listed = next.get(keyId);
    if (listed === undefined || listed < until) next.set(keyId, until);
  }
  return next.size > capacity ? null : next;
}
