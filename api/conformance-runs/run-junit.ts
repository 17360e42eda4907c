// The JUnit XML of a kept run (GET /api/operator/runs/{id}/junit), rendered
// here because this folder alone of api/ may import conformance/. A
// conformance run's is `renderJunit` of conformance/reports/ over its
// SuiteReport: the stored report (summary, interrupted, results), its
// results rebuilt from the run's where it has none; a run stored without a
// report gets a summary counted from its results. A soak run's is written as soak/reports/junit.ts writes
// it (api/ may not import soak/): one testcase per limit, a failure naming
// the measured figure.
import type { CaseResult, SuiteReport, SuiteSummary } from '../../conformance/case-result.js';
import { escapeXml, renderJunit } from '../../conformance/reports/junit.js';
import type { RunResultView, RunWithResults } from '../runs/index.js';

const text = (value: unknown, fallback = ''): string => (typeof value === 'string' ? value : fallback);

function caseResultOf(result: RunResultView): CaseResult {
  const { details } = result;
  const capture = details['capture'];
  return {
    name: result.name,
    step: text(details['step']),
    expected: text(details['expected']),
    got: text(details['got']),
    result: result.result,
    ...(result.reason === null ? {} : { reason: result.reason }),
    ms: result.ms,
    wearing: details['wearing'] === true,
    ...(typeof capture === 'string' ? { capture } : {}),
  };
}

function objectOf(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** The value when it is a finite number, else the fallback. */
export function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}

/** The run's SuiteReport: the stored report's results and summary where it
 * gives them (as the suite wrote them: its files are then the suite's, byte
 * for byte), else rebuilt from the run's results and counted from them. */
export function suiteReportOf(run: RunWithResults, report: unknown): SuiteReport {
  const stored = objectOf(report);
  const storedResults = stored['results'];
  const results = Array.isArray(storedResults) ? (storedResults as CaseResult[]) : run.results.map(caseResultOf);
  const summary = objectOf(stored['summary'] ?? run.summary);
  const count = (verdict: CaseResult['result']): number => results.filter((result) => result.result === verdict).length;
  const controlSeq = objectOf(summary['control_seq']);
  const suiteSummary: SuiteSummary = {
    target: text(summary['target'], run.target),
    module_id: numberOr(summary['module_id'], run.module_id),
    total: numberOr(summary['total'], results.length),
    passed: numberOr(summary['passed'], count('pass')),
    failed: numberOr(summary['failed'], count('fail')),
    skipped: numberOr(summary['skipped'], count('skip')),
    ms: numberOr(summary['ms'], run.duration_ms),
    control_seq: { first: numberOr(controlSeq['first'], 0), next: numberOr(controlSeq['next'], 0) },
  };
  const interrupted = stored['interrupted'] ?? summary['interrupted'];
  return { results, summary: suiteSummary, ...(interrupted === true ? { interrupted: true } : {}) };
}

/** A soak run's JUnit, as `parkbench soak --junit` writes it. */
export function soakJunit(run: RunWithResults): string {
  const summary = objectOf(run.summary);
  const target = text(summary['target'], run.target);
  const className = `soak.${target}`;
  const seconds = (numberOr(summary['ms'], run.duration_ms) / 1000).toFixed(3);
  const cycles = numberOr(summary['cycles'], 0);
  const cases = run.results.map((result) => {
    const open = `    <testcase classname="${className}" name="${escapeXml(result.name)}" time="${(result.ms / 1000).toFixed(3)}"`;
    if (result.result === 'pass') return `${open}/>`;
    if (result.result === 'skip')
      return `${open}>\n      <skipped message="${escapeXml(result.reason ?? 'skipped')}"/>\n    </testcase>`;
    const got = result.value === null ? 'nothing measured' : `measured ${result.value}`;
    const message = result.reason ?? `${result.name}: ${got}`;
    return `${open}>\n      <failure message="${escapeXml(message)}">${escapeXml(`${result.name}: ${got} over ${cycles} cycles`)}</failure>\n    </testcase>`;
  });
  const failed = run.results.filter((result) => result.result === 'fail').length;
  const skipped = run.results.filter((result) => result.result === 'skip').length;
  const name = `parkbench soak (${target}, module ${run.module_id}, ${cycles} cycles)`;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="parkbench soak" tests="${cases.length}" failures="${failed}" time="${seconds}">`,
    `  <testsuite name="${escapeXml(name)}" tests="${cases.length}" failures="${failed}" errors="0" skipped="${skipped}" time="${seconds}">`,
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}

/** The run's JUnit XML: the suite's writer for a conformance run, the soak's style for a soak. */
export function junitOfRun(run: RunWithResults, report: unknown): string {
  if (run.kind === 'soak') return soakJunit(run);
  const suite = suiteReportOf(run, report);
  return renderJunit(suite, { runCaptures: wholeRunCaptures(run.captures, suite) });
}

/** The run's captures that are no case's own: the whole run's files
 * (--capture), attached to the testsuite. A case's file is attached to its
 * testcase alone, as `parkbench conformance --junit` attaches it. */
function wholeRunCaptures(captures: readonly string[], suite: SuiteReport): string[] {
  const caseFiles = new Set(suite.results.flatMap((result) => (result.capture === undefined ? [] : [result.capture])));
  return captures.filter((path) => !caseFiles.has(path));
}
