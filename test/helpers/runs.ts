// Kept runs through the operator API (api/runs/): an operator's calls, and
// a conformance run recorded as the command line records it.
import type { LightMyRequestResponse } from 'fastify';
import type { RunView, RunWithResults } from '../../api/runs/index.js';
import type { TestApp } from './api-app.js';

export function operatorCall(
  app: Pick<TestApp, 'app'>,
  token: string,
  method: 'GET' | 'POST',
  url: string,
  payload?: unknown,
): Promise<LightMyRequestResponse> {
  return app.app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${token}` },
    ...(payload === undefined ? {} : { payload: payload as string }),
  });
}

export interface CaseOutcome {
  readonly name: string;
  readonly result: 'pass' | 'fail' | 'skip';
  readonly ms?: number;
  readonly reason?: string;
  /** A soak limit's measured figure (a soak run's results are its limits). */
  readonly value?: number;
}

/** A conformance case result as `parkbench conformance --record` posts it (with `value`, a soak limit's). */
export function caseResult(outcome: CaseOutcome): Record<string, unknown> {
  return {
    name: outcome.name,
    result: outcome.result,
    reason: outcome.reason ?? (outcome.result === 'pass' ? null : `${outcome.name} ${outcome.result}ed`),
    ms: outcome.ms ?? 20,
    ...(outcome.value === undefined ? {} : { value: outcome.value }),
    details: { step: '5.1', expected: 'OK', got: outcome.result === 'pass' ? 'OK' : 'BAD_TAG', wearing: false },
  };
}

/** Records a whole conformance run of `moduleId` (start, results, end) and returns it as ended. */
export async function recordRun(
  app: Pick<TestApp, 'app'>,
  token: string,
  moduleId: number,
  cases: readonly CaseOutcome[],
  options: { labels?: Record<string, string>; kind?: 'conformance' | 'soak'; summary?: Record<string, unknown> } = {},
): Promise<RunWithResults> {
  const started = await operatorCall(app, token, 'POST', '/api/operator/runs', {
    module_id: moduleId,
    kind: options.kind ?? 'conformance',
    source: 'cli',
    target: 'mqtt',
    labels: options.labels ?? {},
  });
  if (started.statusCode !== 201) throw new Error(`POST /runs: ${started.statusCode} ${started.body}`);
  const run = started.json<RunView>();
  if (cases.length > 0) {
    const posted = await operatorCall(app, token, 'POST', `/api/operator/runs/${run.id}/results`, {
      results: cases.map(caseResult),
    });
    if (posted.statusCode !== 200) throw new Error(`POST results: ${posted.statusCode} ${posted.body}`);
  }
  const failed = cases.filter((entry) => entry.result === 'fail').length;
  const ended = await operatorCall(app, token, 'POST', `/api/operator/runs/${run.id}/end`, {
    state: failed === 0 ? 'passed' : 'failed',
    summary: options.summary ?? {
      total: cases.length,
      passed: cases.filter((entry) => entry.result === 'pass').length,
      failed,
      skipped: cases.filter((entry) => entry.result === 'skip').length,
    },
  });
  if (ended.statusCode !== 200) throw new Error(`POST end: ${ended.statusCode} ${ended.body}`);
  return ended.json<RunWithResults>();
}
