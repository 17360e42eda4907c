// The suite installs its own issuers with SET_ISSUER; when the run ends
// (passed, failed or interrupted) it puts the box's issuer keys back with
// one more SET_ISSUER. "The box's" keys are a reading (conformance/README.md):
// the provisioning file's issuer_key and issuer_key_previous, unless the
// operator names others (--restore-issuer-key). SET_ISSUER cannot set
// issuer_key to none (docs/protocol.md, step 5): a box that held none is
// left with a fresh public key whose private key nobody keeps, so it refuses
// every ACCESS_SIGNED, as a box without an issuer key does.
import { generateIssuerKeyPair, Status } from '../firmware-protocol/index.js';
import { setIssuerCommand } from './box-under-test.js';
import type { CaseResult } from './case-result.js';
import { CaseRun, type SuiteContext } from './suite-context.js';
import { SuiteInterrupted } from './interrupted.js';
import { messageOf } from '../lib/message-of.js';

export const RESTORE_CASE_NAME = "SET_ISSUER puts the box's issuer keys back";

export async function restoreIssuerKeys(context: SuiteContext): Promise<CaseResult> {
  const { issuerKey, issuerKeyPrevious } = context.box.issuerKeys;
  const keys =
    issuerKey === null
      ? { issuerKey: generateIssuerKeyPair().publicKey, issuerKeyPrevious: null }
      : { issuerKey, issuerKeyPrevious };
  const run = new CaseRun(context, RESTORE_CASE_NAME);
  const started = context.clock.now();
  try {
    await run.send(
      setIssuerCommand(context.box, context.controlSeq(), keys),
      { status: Status.OK },
      { evenIfInterrupted: true },
    );
  } catch (error) {
    run.fail(
      error instanceof SuiteInterrupted
        ? 'no answer: the wait for it was given up (the run was stopped)'
        : `the SET_ISSUER could not be sent: ${messageOf(error)}`,
    );
  }
  if (issuerKey === null) run.note('had none: now a key nobody can sign for');
  const base = {
    name: RESTORE_CASE_NAME,
    step: 'checks, step 6; conformance/README.md',
    expected: '0x00',
    got: run.got.join(', ') || '-',
    ms: context.clock.now() - started,
    wearing: false,
  };
  return run.problems.length === 0
    ? { ...base, result: 'pass' }
    : { ...base, result: 'fail', reason: `${run.problems.join('; ')}: the box may still hold the suite's issuer keys` };
}
