// Checks over every exchange of the run, whatever case made it (docs/protocol.md,
// Response frame): box_seq strictly increasing (offset 11), every tag valid
// and bound to its command (offset 24), every command answered within
// --answer-ms, and the echo of kind, key_id, module_id, direction and
// remaining (the paragraph after the checks).
import { verifyResponse } from '../firmware-protocol/index.js';
import type { CaseResult } from './case-result.js';
import { echoProblems } from './expectations.js';
import type { RecordedExchange } from './suite-context.js';

export interface RunCheckInput {
  readonly exchanges: readonly RecordedExchange[];
  readonly boxKey: Uint8Array;
  readonly answerMs: number;
  /** Status reports whose tag did not verify. */
  readonly badReports: number;
}

type Check = Omit<CaseResult, 'ms' | 'wearing'>;

function check(name: string, step: string, expected: string, got: string, problems: readonly string[]): Check {
  if (problems.length === 0) return { name, step, expected, got, result: 'pass' };
  const shown = problems.slice(0, 5).join('; ');
  return {
    name,
    step,
    expected,
    got,
    result: 'fail',
    reason: problems.length > 5 ? `${shown}; and ${problems.length - 5} more` : shown,
  };
}

function boxSeqIncreasing(exchanges: readonly RecordedExchange[]): Check {
  const problems: string[] = [];
  let previous: { seq: number; caseName: string } | undefined;
  let count = 0;
  for (const { fields, caseName } of exchanges) {
    if (fields === null) continue;
    count++;
    if (previous !== undefined && fields.boxSeq <= previous.seq)
      problems.push(`box_seq ${fields.boxSeq} (${caseName}) after ${previous.seq} (${previous.caseName})`);
    previous = { seq: fields.boxSeq, caseName };
  }
  return check(
    'box_seq strictly increasing',
    'response frame, offset 11',
    'increasing',
    problems.length === 0 ? `${count} increasing` : `${problems.length} not`,
    problems,
  );
}

function tagsBound(exchanges: readonly RecordedExchange[], boxKey: Uint8Array, badReports: number): Check {
  const problems: string[] = [];
  let answered = 0;
  let valid = 0;
  for (const { exchange, caseName } of exchanges) {
    if (exchange.response === null) continue;
    answered++;
    if (verifyResponse(exchange.response, boxKey, exchange.command)) valid++;
    else problems.push(`${caseName}: the tag does not verify for its command`);
  }
  if (badReports > 0) problems.push(`${badReports} status report(s) with a tag that does not verify`);
  return check(
    'every response tag valid and bound to its command',
    'response frame, offset 24',
    'all verify',
    `${valid}/${answered} verify`,
    problems,
  );
}

function answeredInTime(exchanges: readonly RecordedExchange[], answerMs: number): Check {
  const problems: string[] = [];
  let slowest = 0;
  for (const { exchange, caseName } of exchanges) {
    if (exchange.response === null) problems.push(`${caseName}: no answer (${exchange.error ?? 'timeout'})`);
    else if (exchange.elapsedMs > answerMs) problems.push(`${caseName}: ${exchange.elapsedMs} ms`);
    if (exchange.response !== null) slowest = Math.max(slowest, exchange.elapsedMs);
  }
  return check(
    `every command answered within ${answerMs} ms`,
    'response frame (one response per command)',
    `<= ${answerMs} ms`,
    `max ${slowest} ms`,
    problems,
  );
}

function echoes(exchanges: readonly RecordedExchange[]): Check {
  const problems: string[] = [];
  for (const { fields, expected, caseName } of exchanges) {
    if (fields === null) continue;
    for (const problem of echoProblems(expected, fields)) problems.push(`${caseName}: ${problem}`);
  }
  return check(
    'kind, key_id, module_id, direction, remaining echoed',
    'response frame; checks (echo)',
    'as docs/protocol.md',
    problems.length === 0 ? 'all as expected' : `${problems.length} differ`,
    problems,
  );
}

export function runChecks(input: RunCheckInput): Check[] {
  return [
    boxSeqIncreasing(input.exchanges),
    tagsBound(input.exchanges, input.boxKey, input.badReports),
    answeredInTime(input.exchanges, input.answerMs),
    echoes(input.exchanges),
  ];
}
