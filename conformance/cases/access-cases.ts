// ACCESS cases: a valid command opens and the barrier cycles; the validity
// window at both ends, with skew (docs/protocol.md, step 7); scope (step
// 3); the module list (step 8); tries (step 9). The window, scope, module
// list and tries cases take the command they send (sealed here;
// signed-cases.ts makes them with ACCESS_SIGNED for a box without K_park).
// Each case uses fresh key ids so tries never mix between cases, and places
// times relative to the box's own clock, learned from a response's box_time.
import { Barrier, Status } from '../../firmware-protocol/index.js';
import { accessCommand, type AccessSpec, type BoxUnderTest } from '../box-under-test.js';
import type { CaseRun } from '../suite-context.js';
import type { ConformanceCase } from './conformance-case.js';

/** Tries of an ordinary test key: plenty, and not 0xFF. */
export const KEY_TRIES = 3;
const HOUR = 3_600;
/** box_time is in whole seconds and time passes during the run: times just
 * inside or outside the window sit this far from its edge. */
export const EDGE_MARGIN_SECONDS = 3;

/** The box clock now, or a failed case when the box does not tell it. */
export async function boxTime(run: CaseRun): Promise<number | undefined> {
  const now = await run.context.learnBoxTime(run);
  if (now === undefined) run.fail('cannot learn the box clock: no verified response');
  return now;
}

/** Makes an access command for `key`: an ACCESS sealed under K_park, or an
 * ACCESS_SIGNED by one of the suite's issuers. */
export type AccessCommandBuilder = (run: CaseRun, key: AccessSpec, box: BoxUnderTest) => Buffer;

/** An ACCESS sealed under K_park (only cases that run on a box holding it). */
const sealedAccess: AccessCommandBuilder = (_run, key, box) => accessCommand(box, key);

/** A key valid for an hour either side of `now` (box time). */
export function validKey(run: CaseRun, now: number, tries = KEY_TRIES): AccessSpec {
  return { keyId: run.context.keyId(), notBefore: Math.max(0, now - HOUR), notAfter: now + HOUR, tries };
}

/** A valid access command opens, and the barrier shows OPENING then CLOSED
 * within --cycle-ms: sealed (version 1) or signed (version 2). */
export function cyclingCase(name: string, step: string, command: AccessCommandBuilder): ConformanceCase {
  return {
    name,
    step,
    expected: '0x00',
    async run(run) {
      const { context } = run;
      const { clock, barrier, settings } = context;
      const now = await boxTime(run);
      if (now === undefined) return;
      // Start from a closed barrier, or OPENING could not be seen.
      if (
        barrier.latest !== Barrier.CLOSED &&
        (await barrier.waitFor(Barrier.CLOSED, barrier.mark, settings.cycleMs)) === null
      ) {
        run.fail(`the barrier is not CLOSED before the command, even after ${settings.cycleMs} ms`);
        return;
      }
      const mark = barrier.mark;
      const sent = clock.now();
      await run.send(command(run, validKey(run, now), run.box), { status: Status.OK, remaining: KEY_TRIES - 1 });
      const cycleDeadline = sent + settings.cycleMs;
      const opening = await barrier.waitFor(Barrier.OPENING, mark, cycleDeadline - clock.now());
      if (opening === null) {
        run.fail(`OPENING not shown within --cycle-ms ${settings.cycleMs} ms (seen: ${seen(run, mark)})`);
        return;
      }
      const closed = await barrier.waitFor(Barrier.CLOSED, opening + 1, cycleDeadline - clock.now());
      if (closed === null)
        run.fail(`CLOSED not shown after OPENING within --cycle-ms ${settings.cycleMs} ms (seen: ${seen(run, mark)})`);
      else run.note(`cycled in ${clock.now() - sent} ms`);
    },
  };
}

const validAccessCycles = cyclingCase(
  'valid ACCESS opens; barrier OPENING then CLOSED',
  'checks, steps 7-11',
  sealedAccess,
);

function seen(run: CaseRun, mark: number): string {
  const names = ['CLOSED', 'OPENING', 'OPEN', 'CLOSING', 'FAULT'];
  const states = run.context.barrier
    .since(mark)
    .map((observation) => names[observation.barrier] ?? String(observation.barrier));
  return states.length === 0 ? 'nothing' : states.join(' > ');
}

type Edge = 'not_before' | 'not_after';

/** Just inside or just outside the window at one end (step 7:
 * not_before − skew <= box_time <= not_after + skew), with the access
 * command `command` makes; `prefix` starts the case's name. */
function edgeCase(edge: Edge, inside: boolean, command: AccessCommandBuilder, prefix = ''): ConformanceCase {
  const status = inside ? Status.OK : edge === 'not_before' ? Status.NOT_YET_VALID : Status.EXPIRED;
  return {
    name: `${prefix}${edge} ${inside ? 'just inside' : 'just outside'} the skew`,
    step: 'checks, step 7',
    expected: inside ? '0x00' : edge === 'not_before' ? '0x10' : '0x11',
    async run(run) {
      const now = await boxTime(run);
      if (now === undefined) return;
      const skew = run.box.skewSeconds;
      const margin = inside ? -EDGE_MARGIN_SECONDS : EDGE_MARGIN_SECONDS;
      const key: AccessSpec =
        edge === 'not_before'
          ? {
              keyId: run.context.keyId(),
              notBefore: now + skew + margin,
              notAfter: now + skew + HOUR,
              tries: KEY_TRIES,
            }
          : {
              keyId: run.context.keyId(),
              notBefore: Math.max(0, now - skew - HOUR),
              notAfter: Math.max(0, now - skew - margin),
              tries: KEY_TRIES,
            };
      // A refusal at step 7 counts no try: remaining stays at the key's tries.
      await run.send(command(run, key, run.box), { status, remaining: inside ? KEY_TRIES - 1 : KEY_TRIES });
    },
  };
}

/** The four window edges (step 7), each access command made by `command`. */
export function windowEdgeCases(command: AccessCommandBuilder, prefix = ''): ConformanceCase[] {
  return [
    edgeCase('not_before', true, command, prefix),
    edgeCase('not_before', false, command, prefix),
    edgeCase('not_after', true, command, prefix),
    edgeCase('not_after', false, command, prefix),
  ];
}

/** An access command scoped to the next parking (step 3): WRONG_PARKING,
 * remaining 0xFF (step 5 never passed). `kind` names it: ACCESS or ACCESS_SIGNED. */
export function otherParkingCase(kind: string, command: AccessCommandBuilder): ConformanceCase {
  return {
    name: `${kind} for another parking`,
    step: 'checks, step 3',
    expected: '0x14',
    async run(run) {
      const now = await boxTime(run);
      if (now === undefined) return;
      const scope = run.box.parkingId === 0xffffffff ? 0 : run.box.parkingId + 1;
      await run.send(command(run, { ...validKey(run, now), scope }, run.box), { status: Status.WRONG_PARKING });
    },
  };
}

/** An access command listing only the next module (step 8): WRONG_MODULE,
 * counting no try. `kind` names it: ACCESS or ACCESS_SIGNED. */
export function moduleNotListedCase(kind: string, command: AccessCommandBuilder): ConformanceCase {
  return {
    name: `${kind} whose module list lacks this box`,
    step: 'checks, step 8',
    expected: '0x13',
    async run(run) {
      const now = await boxTime(run);
      if (now === undefined) return;
      const other = run.box.moduleId === 0xffffffff ? 0 : run.box.moduleId + 1;
      await run.send(command(run, { ...validKey(run, now), moduleIds: [other] }, run.box), {
        status: Status.WRONG_MODULE,
        remaining: KEY_TRIES,
      });
    },
  };
}

/** A key with 2 tries used 3 times (step 9): the first two open (remaining
 * 1, then 0), the third is NO_TRIES_LEFT, each access command made by
 * `command`; `prefix` starts the case's name. Wearing: it spends tries. */
export function twoTriesCase(command: AccessCommandBuilder, prefix = ''): ConformanceCase {
  return {
    name: `${prefix}a key with 2 tries, used 3 times`,
    step: 'checks, step 9',
    expected: '0x00, 0x00, 0x12',
    wearing: true,
    async run(run) {
      const now = await boxTime(run);
      if (now === undefined) return;
      const key = validKey(run, now, 2);
      await run.send(command(run, key, run.box), { status: Status.OK, remaining: 1 });
      await run.send(command(run, key, run.box), { status: Status.OK, remaining: 0 });
      await run.send(command(run, key, run.box), { status: Status.NO_TRIES_LEFT, remaining: 0 });
    },
  };
}

/** Every one seals under K_park. */
export const accessCases: readonly ConformanceCase[] = [
  validAccessCycles,
  ...windowEdgeCases(sealedAccess),
  otherParkingCase('ACCESS', sealedAccess),
  moduleNotListedCase('ACCESS', sealedAccess),
  twoTriesCase(sealedAccess),
].map((conformanceCase) => ({ ...conformanceCase, needsParkingKey: true }));
