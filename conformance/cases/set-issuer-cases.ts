// SET_ISSUER's own rules (docs/protocol.md, Command frame, bodies; checks, steps 5 and 6): each
// key a point on P-256, only issuer_key_previous may be 64 zero bytes, and
// a replayed SET_ISSUER is refused. A refusal at step 5 spends no control
// sequence; the box keeps the suite's issuers either way.
import { FrameKind, ISSUER_PUBLIC_KEY_LENGTH, sealRawCommand, Status } from '../../firmware-protocol/index.js';
import { setIssuerCommand } from '../box-under-test.js';
import type { CaseRun } from '../suite-context.js';
import type { ConformanceCase } from './conformance-case.js';

/** X = 1, Y = 1: not on P-256 (1 ≠ 1 − 3 + b mod p). */
const OFF_CURVE = Buffer.concat([Buffer.alloc(31), Buffer.of(1), Buffer.alloc(31), Buffer.of(1)]);
const NONE = Buffer.alloc(ISSUER_PUBLIC_KEY_LENGTH);

/** A SET_ISSUER body of any two 64-byte values, sealed under K_box. */
function rawSetIssuer(run: CaseRun, issuerKey: Buffer, issuerKeyPrevious: Buffer): Buffer {
  run.context.issuerKeysTouched = true;
  return sealRawCommand({
    key: run.box.boxKey,
    kind: FrameKind.SET_ISSUER,
    keyId: run.context.controlSeq(),
    scope: run.box.moduleId,
    plaintext: Buffer.concat([issuerKey, issuerKeyPrevious]),
  });
}

const offCurve: ConformanceCase = {
  name: 'SET_ISSUER with a point not on P-256 (issuer_key, then issuer_key_previous)',
  step: 'checks, step 5',
  expected: '0x21, 0x21',
  async run(run) {
    const { current } = run.context.issuers;
    await run.send(rawSetIssuer(run, OFF_CURVE, NONE), { status: Status.MALFORMED });
    await run.send(rawSetIssuer(run, current.publicKey, OFF_CURVE), { status: Status.MALFORMED });
  },
};

const zeroIssuerKey: ConformanceCase = {
  name: 'SET_ISSUER with issuer_key all zero',
  step: 'checks, step 5',
  expected: '0x21',
  async run(run) {
    await run.send(rawSetIssuer(run, NONE, run.context.issuers.current.publicKey), { status: Status.MALFORMED });
  },
};

const replayed: ConformanceCase = {
  name: 'the same SET_ISSUER again',
  step: 'checks, step 6',
  expected: '0x00, 0x15',
  async run(run) {
    run.context.issuerKeysTouched = true;
    // The keys the box holds already at this point of the run: accepting it changes nothing.
    const frame = setIssuerCommand(run.box, run.context.controlSeq(), {
      issuerKey: run.context.issuers.current.publicKey,
      issuerKeyPrevious: null,
    });
    await run.send(frame, { status: Status.OK });
    await run.send(frame, { status: Status.REPLAY });
  },
};

export const setIssuerCases: readonly ConformanceCase[] = [offCurve, zeroIssuerKey, replayed];
