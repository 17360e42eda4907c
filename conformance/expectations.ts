// How a response must answer its command, field by field (docs/protocol.md,
// Response frame and the paragraph after step 11): status, kind and
// key_id echoed when steps 1 and 2 passed (else 0), module_id of the box,
// direction 0 for a control kind else the box's own, remaining as given.
import {
  Direction,
  isControlKind,
  parseCommandHeader,
  REMAINING_NOT_APPLICABLE,
  statusName,
  type ParsedResponse,
  type Status,
} from '../firmware-protocol/index.js';
import type { BoxUnderTest } from './box-under-test.js';

export interface Expectation {
  readonly status: Status;
  /** Tries left after this command; 0xFF (not applicable) unless given. */
  readonly remaining?: number;
}

export interface ExpectedFields {
  readonly status: Status;
  readonly kind: number;
  readonly keyId: number;
  readonly moduleId: number;
  readonly direction: number;
  readonly remaining: number;
}

export function expectedFields(box: BoxUnderTest, command: Uint8Array, expectation: Expectation): ExpectedFields {
  const header = parseCommandHeader(command);
  const kind = header.ok ? header.header.kind : 0;
  return {
    status: expectation.status,
    kind,
    keyId: header.ok ? header.header.keyId : 0,
    moduleId: box.moduleId,
    direction: isControlKind(kind) ? Direction.CONTROL : box.direction,
    remaining: expectation.remaining ?? REMAINING_NOT_APPLICABLE,
  };
}

/** The echo fields (everything but the status) that differ, as readable lines. */
export function echoProblems(expected: ExpectedFields, got: ParsedResponse): string[] {
  const problems: string[] = [];
  const compare = (field: string, want: number, have: number): void => {
    if (want !== have) problems.push(`${field} ${have}, expected ${want}`);
  };
  compare('kind', expected.kind, got.kind);
  compare('key_id', expected.keyId, got.keyId);
  compare('module_id', expected.moduleId, got.moduleId);
  compare('direction', expected.direction, got.direction);
  // remaining follows from the status (tries counted or not): compared only
  // when the status is the one expected, so a wrong status is one problem.
  if (got.status === expected.status) compare('remaining', expected.remaining, got.remaining);
  return problems;
}

/** `0x12` as the table shows a status byte. */
export function statusByte(status: number): string {
  return `0x${status.toString(16).padStart(2, '0')}`;
}

/** `0x12 NO_TRIES_LEFT` */
export function describeStatus(status: number): string {
  return `${statusByte(status)} ${statusName(status) ?? 'unknown'}`;
}
