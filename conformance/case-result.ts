// The outcome of one case (or one check over the whole run), as the table,
// the JSON and the JUnit report show it.
export type Verdict = 'pass' | 'fail' | 'skip';

export interface CaseResult {
  readonly name: string;
  /** Where in docs/protocol.md the rule is (a section or a step). */
  readonly step: string;
  readonly expected: string;
  readonly got: string;
  readonly result: Verdict;
  /** Why it failed (or was skipped); absent when it passed. */
  readonly reason?: string;
  readonly ms: number;
  readonly wearing: boolean;
  /** The file of what crossed the link during the case (--capture-dir). */
  readonly capture?: string;
}

export interface SuiteSummary {
  readonly target: string;
  readonly module_id: number;
  readonly total: number;
  readonly passed: number;
  readonly failed: number;
  readonly skipped: number;
  readonly ms: number;
  readonly control_seq: { readonly first: number; readonly next: number };
}

export interface SuiteReport {
  readonly results: readonly CaseResult[];
  /** Stopped by an abort (SIGINT) before every case ran. */
  readonly interrupted?: boolean;
  readonly summary: SuiteSummary;
}

export function passedAll(report: SuiteReport): boolean {
  return report.summary.failed === 0;
}
