// Deliberate firmware bugs a simulated box can be started with, so a test can
// prove that the conformance suite catches a box that gets the protocol wrong.
// Each one runs after the correct decision and changes only the cases of its
// own step (docs/protocol.md, steps 1..11): every other answer stays the reference's.
// `forget-tries` decides as the reference does and acts at start instead
// (stateAtStart): what the box loaded from its state file, minus the tries.
import { sign } from 'node:crypto';
import { Direction, FrameKind, SIGNATURE_LENGTH, Status } from '../firmware-protocol/constants.js';
import type { BoxConditions, BoxState } from '../firmware-protocol/box.js';
import type { Decision } from '../firmware-protocol/decide.js';
import { generateIssuerKeyPair, issuerPrivateKeyObject } from '../firmware-protocol/index.js';
import type { FirmwareBug } from './firmware-bug-names.js';

/** What a bug sees of the command it may answer differently. */
export interface BugContext {
  readonly decision: Decision;
  readonly conditions: BoxConditions;
  readonly state: BoxState;
  readonly command: Uint8Array;
  /** The reference decision again, on other conditions, state or bytes. */
  readonly decideAgain: (changes: { conditions?: BoxConditions; state?: BoxState; command?: Uint8Array }) => Decision;
}

/** The bug's own signing key: re-signing a frame under it lets `decide` take
 * any signature while running every other step as the reference does. */
let anySignatureIssuer: { readonly privateKey: Buffer; readonly publicKey: Buffer } | undefined;

export const firmwareBugs = {
  /** Ignores not_after (step 7): an expired smart key still opens the barrier. */
  'accept-expired': ({ decision, conditions, decideAgain }: BugContext): Decision => {
    const command = decision.command;
    if (
      decision.status !== Status.EXPIRED ||
      command === null ||
      (command.kind !== FrameKind.ACCESS && command.kind !== FrameKind.ACCESS_SIGNED)
    )
      return decision;
    return decideAgain({ conditions: { ...conditions, boxTime: command.body.notAfter } });
  },
  /** Skips the revocation check (step 8a): a revoked smart key still opens
   * the barrier (and spends a try). The list itself is kept as it is. */
  'accept-revoked': ({ decision, state, decideAgain }: BugContext): Decision => {
    if (decision.status !== Status.REVOKED) return decision;
    const revocations = new Map(state.revocations);
    revocations.delete(decision.keyId);
    const again = decideAgain({ state: { ...state, revocations } });
    return { ...again, state: { ...again.state, revocations: state.revocations } };
  },
  /** Takes any signature of an ACCESS_SIGNED (step 4), under no issuer key at
   * all too: a flipped byte of body or signature, or a stranger's key, opens. */
  'accept-any-signature': ({ decision, state, command, decideAgain }: BugContext): Decision => {
    if (decision.status !== Status.AUTH_FAILED || decision.kind !== FrameKind.ACCESS_SIGNED) return decision;
    anySignatureIssuer ??= generateIssuerKeyPair();
    const signed = command.subarray(0, command.length - SIGNATURE_LENGTH);
    const signature = sign('sha256', signed, {
      key: issuerPrivateKeyObject(anySignatureIssuer.privateKey),
      dsaEncoding: 'ieee-p1363',
    });
    // Only the signature changes: the response still binds to bytes 10..21 of the command as received.
    const again = decideAgain({
      state: { ...state, issuerKey: anySignatureIssuer.publicKey, issuerKeyPrevious: null },
      command: Buffer.concat([signed, signature]),
    });
    return {
      ...again,
      state: { ...again.state, issuerKey: state.issuerKey, issuerKeyPrevious: state.issuerKeyPrevious },
    };
  },
  /** Skips the tries check (step 9): a key whose tries in this box's
   * direction are spent still opens the barrier (OK, not NO_TRIES_LEFT).
   * The box decides as if one try were left, so steps 10 and 11 still
   * refuse as they would; the count it keeps is left as it was, and the
   * answer's remaining is 0: no try is left, and a count cannot go below
   * none (0xFF would say that no try applies, which is untrue of an access
   * that passed step 5). */
  'ignore-tries': ({ decision, state, decideAgain }: BugContext): Decision => {
    const command = decision.command;
    if (
      decision.status !== Status.NO_TRIES_LEFT ||
      command === null ||
      (command.kind !== FrameKind.ACCESS && command.kind !== FrameKind.ACCESS_SIGNED)
    )
      return decision;
    const { body } = command;
    const max = decision.fields.direction === Direction.ENTRANCE ? body.maxEntries : body.maxExits;
    // One short of the key's tries: step 9 passes, and remaining comes out 0.
    const tries = new Map(state.tries);
    tries.set(decision.keyId, { count: max - 1, notAfter: body.notAfter });
    const again = decideAgain({ state: { ...state, tries } });
    return { ...again, state: { ...again.state, tries: state.tries } };
  },
  /** Decides as the reference does: its fault is in stateAtStart. */
  'forget-tries': ({ decision }: BugContext): Decision => decision,
} as const satisfies Record<FirmwareBug, (context: BugContext) => Decision>;

/**
 * The state a box with these bugs starts from (at power on or a process
 * start), given what its state file held. `forget-tries` drops the per-key
 * tries counts (docs/protocol.md, the paragraph after step 11, says they
 * survive a restart); everything else it persisted is kept.
 */
export function stateAtStart(bugs: readonly FirmwareBug[], state: BoxState): BoxState {
  if (!bugs.includes('forget-tries')) return state;
  return { ...state, tries: new Map() };
}
