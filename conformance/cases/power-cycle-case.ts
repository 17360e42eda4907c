// What a box keeps across a power cycle (docs/protocol.md, the paragraph after
// the checks: "The count of tries per key, box_seq, the last control
// sequence, the issuer keys and the revocation list survive a restart of the
// box"), checked where the target can restart the box; box_seq is checked
// over the whole run (run-checks.ts). No target of the command line can
// restart a box: the case then says so and is skipped.
import { Status } from '../../firmware-protocol/index.js';
import { revokeCommand, signedAccessCommand, type AccessSpec } from '../box-under-test.js';
import type { CaseRun } from '../suite-context.js';
import { boxTime, KEY_TRIES, validKey } from './access-cases.js';
import type { ConformanceCase } from './conformance-case.js';
import { REVOCATION_LIVE_SECONDS } from './revocation-cases.js';

export const CANNOT_RESTART = 'the target cannot restart the box';
/** A box may take a while to come back: its revocation must outlive that. */
const RESTART_ALLOWANCE_SECONDS = 60;

function signed(run: CaseRun, key: AccessSpec): Buffer {
  return signedAccessCommand(run.box, run.context.issuers.current.privateKey, key);
}

export const powerCycleCase: ConformanceCase = {
  name: 'issuer keys, revocations, tries and the control sequence survive a power cycle',
  step: 'checks, the paragraph after step 11',
  expected: '0x00, 0x00, restart, 0x00, 0x16, 0x00, 0x15',
  async run(run) {
    const { context } = run;
    const target = context.target;
    if (target.restart === undefined) {
      run.skip(target.cannotRestart ?? CANNOT_RESTART);
      return;
    }
    const now = await boxTime(run);
    if (now === undefined) return;
    const tried = validKey(run, now, 2);
    const revoked = validKey(run, now);
    const entries = [
      {
        keyId: revoked.keyId,
        until: Math.max(0, now - run.box.skewSeconds + REVOCATION_LIVE_SECONDS + RESTART_ALLOWANCE_SECONDS),
      },
    ];
    const revoke = revokeCommand(run.box, context.controlSeq(), entries);
    const answer = await run.send(revoke, { status: Status.OK });
    if (answer.fields?.status === Status.OK) context.revoked(entries);
    await run.send(signed(run, tried), { status: Status.OK, remaining: 1 });
    await target.restart();
    run.note('restart');
    // Tries kept: the second of two.
    await run.send(signed(run, tried), { status: Status.OK, remaining: 0 });
    // The revocation list kept.
    await run.send(signed(run, revoked), { status: Status.REVOKED, remaining: KEY_TRIES });
    // The issuer keys SET_ISSUER put there kept, not the provisioning file's.
    await run.send(signed(run, validKey(run, now)), { status: Status.OK, remaining: KEY_TRIES - 1 });
    // The last control sequence kept.
    await run.send(revoke, { status: Status.REPLAY });
  },
};
