// Version 2 access (docs/protocol.md, Command frame, ACCESS_SIGNED; checks, steps
// 2 to 6): the suite installs its own two issuers with SET_ISSUER (it holds
// K_box), signs with them, and checks that only a signature by issuer_key or
// issuer_key_previous over the exact bytes opens; that SET_ISSUER(new, none)
// drops the previous issuer; and that a box without K_park refuses every
// sealed ACCESS and applies the access rules a sealed ACCESS would have
// checked (window, scope, module list, tries) to ACCESS_SIGNED. The box's
// own issuer keys are put back when the run ends (run-suite.ts).
import { randomBytes } from 'node:crypto';
import { CommandOffset, generateIssuerKeyPair, Status } from '../../firmware-protocol/index.js';
import { accessCommand, setIssuerCommand, signedAccessCommand } from '../box-under-test.js';
import type { CaseRun } from '../suite-context.js';
import {
  boxTime,
  cyclingCase,
  KEY_TRIES,
  moduleNotListedCase,
  otherParkingCase,
  twoTriesCase,
  validKey,
  windowEdgeCases,
  type AccessCommandBuilder,
} from './access-cases.js';
import type { ConformanceCase } from './conformance-case.js';

/** Sends a SET_ISSUER; from here on the box's own keys must be put back. */
export async function sendSetIssuer(
  run: CaseRun,
  keys: { issuerKey: Buffer; issuerKeyPrevious: Buffer | null },
  status: Status = Status.OK,
): Promise<void> {
  run.context.issuerKeysTouched = true;
  await run.send(setIssuerCommand(run.box, run.context.controlSeq(), keys), { status });
}

/** An ACCESS_SIGNED by the suite's current issuer, valid now, for a fresh key. */
async function signedNow(
  run: CaseRun,
  privateKey = run.context.issuers.current.privateKey,
): Promise<Buffer | undefined> {
  const now = await boxTime(run);
  if (now === undefined) return undefined;
  return signedAccessCommand(run.box, privateKey, validKey(run, now));
}

function flipByte(frame: Buffer, offset: number): Buffer {
  const copy = Buffer.from(frame);
  copy[offset] = (copy[offset] ?? 0) ^ 0x01;
  return copy;
}

const installIssuers: ConformanceCase = {
  name: "SET_ISSUER installs the suite's issuers (new, previous)",
  step: 'checks, steps 5 and 6',
  expected: '0x00',
  async run(run) {
    const { current, previous } = run.context.issuers;
    await sendSetIssuer(run, { issuerKey: current.publicKey, issuerKeyPrevious: previous.publicKey });
  },
};

/** An ACCESS_SIGNED by the suite's current issuer. */
const signedByCurrentIssuer: AccessCommandBuilder = (run, key, box) =>
  signedAccessCommand(box, run.context.issuers.current.privateKey, key);

const signedOpens = cyclingCase(
  'valid ACCESS_SIGNED opens; barrier OPENING then CLOSED',
  'checks, steps 4, 7-11',
  signedByCurrentIssuer,
);

/** An ACCESS_SIGNED with something changed after signing: refused at step 4. */
function tampered(name: string, expected: string, change: (frame: Buffer) => Buffer[]): ConformanceCase {
  return {
    name,
    step: 'checks, step 4',
    expected,
    async run(run) {
      const frame = await signedNow(run);
      if (frame === undefined) return;
      // remaining is 0xFF: step 5 never passed.
      for (const changed of change(frame)) await run.send(changed, { status: Status.AUTH_FAILED });
    },
  };
}

const flippedBody = tampered('ACCESS_SIGNED with a flipped byte of its body (last module id)', '0x20', (frame) => [
  flipByte(frame, frame.length - 65),
]);
// key_id and the nonce: the header bytes that reach step 4 (version, kind and scope stop earlier).
const flippedHeader = tampered(
  'ACCESS_SIGNED with a flipped byte of its header (key_id, then nonce)',
  '0x20, 0x20',
  (frame) => [flipByte(frame, CommandOffset.keyId + 3), flipByte(frame, CommandOffset.nonce)],
);
const flippedSignature = tampered(
  'ACCESS_SIGNED with a flipped byte of its signature (r, then s)',
  '0x20, 0x20',
  (frame) => [flipByte(frame, frame.length - 64), flipByte(frame, frame.length - 1)],
);

const unknownIssuer: ConformanceCase = {
  name: 'ACCESS_SIGNED by an issuer the box does not hold',
  step: 'checks, step 4',
  expected: '0x20',
  async run(run) {
    const frame = await signedNow(run, generateIssuerKeyPair().privateKey);
    if (frame !== undefined) await run.send(frame, { status: Status.AUTH_FAILED });
  },
};

const previousIssuerOpens: ConformanceCase = {
  name: 'ACCESS_SIGNED by issuer_key_previous opens',
  step: 'checks, step 4',
  expected: '0x00',
  async run(run) {
    const frame = await signedNow(run, run.context.issuers.previous.privateKey);
    if (frame !== undefined) await run.send(frame, { status: Status.OK, remaining: KEY_TRIES - 1 });
  },
};

const previousIssuerDropped: ConformanceCase = {
  name: 'after SET_ISSUER(new, none) the previous issuer is refused, the new one opens',
  step: 'checks, steps 4 and 6; security notes (issuer rotation)',
  expected: '0x00, 0x20, 0x00',
  async run(run) {
    const { current, previous } = run.context.issuers;
    await sendSetIssuer(run, { issuerKey: current.publicKey, issuerKeyPrevious: null });
    const refused = await signedNow(run, previous.privateKey);
    if (refused === undefined) return;
    await run.send(refused, { status: Status.AUTH_FAILED });
    const opens = await signedNow(run, current.privateKey);
    if (opens !== undefined) await run.send(opens, { status: Status.OK, remaining: KEY_TRIES - 1 });
  },
};

/** The sealed ACCESS cases' stand-in on a box without K_park (docs/protocol.md,
 * keys: such a box "answers every ACCESS AUTH_FAILED"). */
export const sealedWithoutParkingKey: ConformanceCase = {
  name: 'a sealed ACCESS on a box without K_park',
  step: 'keys; checks, step 4',
  expected: '0x20',
  async run(run) {
    const now = await boxTime(run);
    if (now === undefined) return;
    await run.send(accessCommand(run.box, validKey(run, now), randomBytes(16)), { status: Status.AUTH_FAILED });
  },
};

/** On a box without K_park, the access rules the sealed ACCESS cases check
 * elsewhere, with ACCESS_SIGNED: the window at both ends (step 7), another
 * parking's scope (step 3), a module list without this box (step 8), a key
 * run out of tries (step 9, wearing). */
const signedAccessRules: readonly ConformanceCase[] = [
  ...windowEdgeCases(signedByCurrentIssuer, 'ACCESS_SIGNED '),
  otherParkingCase('ACCESS_SIGNED', signedByCurrentIssuer),
  moduleNotListedCase('ACCESS_SIGNED', signedByCurrentIssuer),
  twoTriesCase(signedByCurrentIssuer, 'ACCESS_SIGNED '),
];

/** In order: the issuers are installed first; the rotation goes last, as it
 * drops the previous issuer. A box without K_park (`withParkingKey` false)
 * also gets the access rules by ACCESS_SIGNED, right after the valid one
 * opens; a box holding K_park has them checked by its sealed ACCESS cases. */
export function signedCases(withParkingKey: boolean): readonly ConformanceCase[] {
  return [
    installIssuers,
    signedOpens,
    ...(withParkingKey ? [] : signedAccessRules),
    flippedBody,
    flippedHeader,
    flippedSignature,
    unknownIssuer,
    previousIssuerOpens,
    previousIssuerDropped,
  ];
}
