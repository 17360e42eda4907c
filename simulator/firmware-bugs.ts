// Deliberate firmware bugs a simulated box can be started with, so a test can
// prove that the conformance suite catches a box that gets the protocol wrong.
import { FrameKind, Status } from '../firmware-protocol/constants.js';
import type { BoxConditions } from '../firmware-protocol/box.js';
import type { Decision } from '../firmware-protocol/decide.js';

export const firmwareBugs = {
  /** Ignores not_after: an expired smart key still opens the barrier. */
  'accept-expired': (decision: Decision, conditions: BoxConditions, decideAgain: (conditions: BoxConditions) => Decision): Decision => {
    const body = decision.command?.kind === FrameKind.ACCESS ? decision.command.body : undefined;
    if (decision.status !== Status.EXPIRED || body === undefined) return decision;
    return decideAgain({ ...conditions, boxTime: body.notAfter });
  },
} as const satisfies Record<string, (decision: Decision, conditions: BoxConditions, decideAgain: (conditions: BoxConditions) => Decision) => Decision>;

export type FirmwareBug = keyof typeof firmwareBugs;

export function isFirmwareBug(name: string): name is FirmwareBug {
  return Object.hasOwn(firmwareBugs, name);
}
