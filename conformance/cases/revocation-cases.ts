// The revocation list (docs/protocol.md, Command frame, bodies, REVOKE; checks, steps 5, 6 and
// 8a): a revoked key is refused and spends no try; an entry whose until +
// skew has passed refuses nothing; REVOKE bodies of a bad count or length are
// MALFORMED; and the list takes at least 64 live entries, then answers
// REVOCATION_FULL. Every entry the suite adds names a key id of its own (a
// fresh one) and lives at most REVOCATION_LIVE_SECONDS, so no real key is
// locked out and the list empties itself soon after a run.
import {
  FrameKind,
  MAX_REVOKE_ENTRIES,
  REVOCATION_LIST_CAPACITY,
  sealRawCommand,
  Status,
  type RevokeEntry,
} from '../../firmware-protocol/index.js';
import { accessCommand, revokeCommand, signedAccessCommand, type AccessSpec } from '../box-under-test.js';
import { describeStatus, statusByte } from '../expectations.js';
import type { CaseRun, SuiteContext } from '../suite-context.js';
import { boxTime, KEY_TRIES, validKey } from './access-cases.js';
import type { ConformanceCase } from './conformance-case.js';

/** How long an entry the suite adds stays live on the box, seconds: long
 * enough for a case (a few answers of up to --answer-ms), short enough that
 * the list the REVOCATION_FULL case filled is empty again half a minute later. */
export const REVOCATION_LIVE_SECONDS = 30;
/** The REVOCATION_FULL case stops adding entries here: a box holding this
 * many live ones holds "at least 64", and the case says so and passes. */
export const REVOCATION_CAPACITY_BOUND = 1_024;
/** One REVOKE carries at most 16 entries; room for the halving at the end. */
const MAX_FILL_COMMANDS = REVOCATION_CAPACITY_BOUND / MAX_REVOKE_ENTRIES + 16;

/** An until that keeps an entry live for REVOCATION_LIVE_SECONDS from box
 * time `now` (live while until + skew >= box_time, step 8a). */
function liveUntil(context: SuiteContext, now: number): number {
  return Math.max(0, now - context.box.skewSeconds + REVOCATION_LIVE_SECONDS);
}

/** Sends a REVOKE expecting `status`; the entries count as the box's once it answers OK. */
async function sendRevoke(
  run: CaseRun,
  entries: readonly RevokeEntry[],
  status: Status = Status.OK,
): Promise<Status | undefined> {
  const answer = await run.send(revokeCommand(run.box, run.context.controlSeq(), entries), { status });
  if (answer.fields?.status === Status.OK) run.context.revoked(entries);
  return answer.fields?.status;
}

function signed(run: CaseRun, key: AccessSpec): Buffer {
  return signedAccessCommand(run.box, run.context.issuers.current.privateKey, key);
}

/** REVOKED, twice, with remaining unchanged: a revoked key spends no try
 * (step 8a comes before step 9). With K_park, a sealed ACCESS of the same
 * key_id too: step 8a holds for both access kinds. */
function revokedCase(withParkingKey: boolean): ConformanceCase {
  return {
    name: 'a revoked key is REVOKED and spends no try',
    step: 'checks, steps 6 and 8a',
    expected: withParkingKey ? '0x00, 0x16, 0x16, 0x16' : '0x00, 0x16, 0x16',
    async run(run) {
      const now = await boxTime(run);
      if (now === undefined) return;
      // One try: a box that spent it would answer remaining 0, then NO_TRIES_LEFT.
      const key = validKey(run, now, 1);
      await sendRevoke(run, [{ keyId: key.keyId, until: liveUntil(run.context, now) }]);
      await run.send(signed(run, key), { status: Status.REVOKED, remaining: 1 });
      await run.send(signed(run, key), { status: Status.REVOKED, remaining: 1 });
      if (withParkingKey) await run.send(accessCommand(run.box, key), { status: Status.REVOKED, remaining: 1 });
    },
  };
}

const expiredRevocation: ConformanceCase = {
  name: 'a revocation whose until + skew is before box_time refuses nothing',
  step: 'checks, steps 6 and 8a',
  expected: '0x00, 0x00',
  async run(run) {
    const now = await boxTime(run);
    if (now === undefined) return;
    const key = validKey(run, now);
    await sendRevoke(run, [
      { keyId: key.keyId, until: Math.max(0, now - run.box.skewSeconds - REVOCATION_LIVE_SECONDS) },
    ]);
    await run.send(signed(run, key), { status: Status.OK, remaining: KEY_TRIES - 1 });
  },
};

/** A REVOKE body of any bytes, sealed under K_box. */
function rawRevoke(run: CaseRun, count: number, entries: number): Buffer {
  const body = Buffer.alloc(1 + 8 * entries);
  body[0] = count;
  const until = liveUntil(run.context, run.context.boxTimeNow() ?? 0);
  for (let index = 0; index < entries; index++) {
    body.writeUInt32BE(run.context.keyId(), 1 + 8 * index);
    body.writeUInt32BE(until, 5 + 8 * index);
  }
  return sealRawCommand({
    key: run.box.boxKey,
    kind: FrameKind.REVOKE,
    keyId: run.context.controlSeq(),
    scope: run.box.moduleId,
    plaintext: body,
  });
}

const malformedRevoke: ConformanceCase = {
  name: 'REVOKE with count 0, count 17, and count 2 carrying 1 entry',
  step: 'checks, step 5',
  expected: '0x21, 0x21, 0x21',
  async run(run) {
    await run.send(rawRevoke(run, 0, 0), { status: Status.MALFORMED });
    await run.send(rawRevoke(run, MAX_REVOKE_ENTRIES + 1, MAX_REVOKE_ENTRIES + 1), { status: Status.MALFORMED });
    await run.send(rawRevoke(run, 2, 1), { status: Status.MALFORMED });
  },
};

/** `0x00 ×4, 0x32`: the statuses of the REVOKEs that filled the list. */
function runLengths(statuses: readonly number[]): string {
  const parts: string[] = [];
  for (let index = 0; index < statuses.length;) {
    let end = index;
    while (statuses[end + 1] === statuses[index]) end++;
    const status = statusByte(statuses[index] ?? 0);
    parts.push(end === index ? status : `${status} ×${end - index + 1}`);
    index = end + 1;
  }
  return parts.join(', ');
}

/**
 * Fills the list: REVOKEs of up to 16 fresh entries until 64 live entries
 * are on the box (each must be OK), then one entry more (the 65th):
 * REVOCATION_FULL passes. The live entries are the suite's and those the box
 * held before the run that the suite was told of (settings.heldRevocations:
 * the service's own revocations, or `--held-revocations N`). A box that takes it holds more than 64: the
 * case goes on, 16 entries a REVOKE, halving the REVOKE on each
 * REVOCATION_FULL down to one entry, to find the capacity it reports; up to
 * REVOCATION_CAPACITY_BOUND live entries, where it stops and passes. Then a
 * key of the refused REVOKE still opens: "nothing changed" (step 6).
 */
const revocationFull: ConformanceCase = {
  name: 'REVOKE at the 65th live entry is REVOCATION_FULL (or the box says it holds more)',
  step: 'checks, step 6; a list holds at least 64 entries',
  expected: '0x00 to 64 live entries, 0x32; 0x00',
  wearing: true,
  async run(run) {
    const { context } = run;
    const started = await boxTime(run);
    if (started === undefined) return;
    const statuses: number[] = [];
    let step: number = MAX_REVOKE_ENTRIES;
    let beyondMinimum = false;
    let peak = 0;
    let refused: { capacity: number; keyId: number } | undefined;
    for (let sent = 0; sent < MAX_FILL_COMMANDS && refused === undefined; sent++) {
      const now = context.boxTimeNow() ?? started;
      const ours = context.liveRevocations(now);
      const held = context.heldLiveRevocations(now);
      const live = ours + held;
      if (live >= REVOCATION_CAPACITY_BOUND) break;
      const size =
        live < REVOCATION_LIST_CAPACITY
          ? Math.min(MAX_REVOKE_ENTRIES, REVOCATION_LIST_CAPACITY - live)
          : beyondMinimum
            ? step
            : 1;
      const entries = Array.from({ length: size }, () => ({ keyId: context.keyId(), until: liveUntil(context, now) }));
      const mayBeFull = live + size > REVOCATION_LIST_CAPACITY;
      const { checked, problems } = await context.exchange(
        run.caseName,
        revokeCommand(run.box, context.controlSeq(), entries),
        { status: mayBeFull ? Status.REVOCATION_FULL : Status.OK },
      );
      const status = checked.fields?.status;
      // Past 64 live entries, OK (the box holds more) is as good as REVOCATION_FULL.
      const tolerated =
        mayBeFull && status === Status.OK ? problems.filter((problem) => !problem.startsWith('status ')) : problems;
      run.problems.push(...tolerated);
      if (status === undefined) return;
      statuses.push(status);
      if (status === Status.OK) {
        context.revoked(entries);
        const at = checked.fields?.boxTime ?? now;
        peak = Math.max(peak, context.liveRevocations(at) + context.heldLiveRevocations(at));
        if (live + size > REVOCATION_LIST_CAPACITY) beyondMinimum = true;
      } else if (status === Status.REVOCATION_FULL && mayBeFull) {
        if (size === 1) refused = { capacity: live, keyId: entries[0]?.keyId ?? 0 };
        else step = size >> 1;
      } else {
        if (status === Status.REVOCATION_FULL)
          run.fail(
            `REVOCATION_FULL with ${ours} live entries of the suite's, ${held} the box held before and ${size} new: a list holds at least ${REVOCATION_LIST_CAPACITY}. If the box holds revocations the suite was not told of (the service's own, an earlier run's), give their number: parkbench conformance --held-revocations N (a run from the operator API counts the service's), or run again once they have expired`,
          );
        run.note(runLengths(statuses));
        return;
      }
    }
    run.note(runLengths(statuses));
    if (refused === undefined) {
      run.note(
        `no REVOCATION_FULL with up to ${peak} live entries: the box holds more than ${REVOCATION_LIST_CAPACITY} (the suite stops at ${REVOCATION_CAPACITY_BOUND})`,
      );
      return;
    }
    run.note(
      refused.capacity === REVOCATION_LIST_CAPACITY
        ? `full at live entry ${refused.capacity + 1}`
        : `full at live entry ${refused.capacity + 1}: the box holds ${refused.capacity}, more than ${REVOCATION_LIST_CAPACITY}`,
    );
    // The refused REVOKE changed nothing: its key is not revoked.
    const now = context.boxTimeNow() ?? started;
    const answer = await run.send(signed(run, { ...validKey(run, now), keyId: refused.keyId }), {
      status: Status.OK,
      remaining: KEY_TRIES - 1,
    });
    if (answer.fields !== null && answer.fields.status !== Status.OK)
      run.fail(`the key of the refused REVOKE answered ${describeStatus(answer.fields.status)}: the list changed`);
  },
};

export function revocationCases(withParkingKey: boolean): {
  readonly early: readonly ConformanceCase[];
  readonly full: ConformanceCase;
} {
  return { early: [revokedCase(withParkingKey), expiredRevocation, malformedRevoke], full: revocationFull };
}
