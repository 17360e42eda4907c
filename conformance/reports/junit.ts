// `--junit FILE`: JUnit XML for CI, one testcase per case (and per check
// over the whole run); a failure carries its reason, a skipped case <skipped/>.
// A case's capture file (--capture-dir) is attached as Jenkins' JUnit
// Attachments plugin and GitLab read attachments: `[[ATTACHMENT|path]]` in
// the testcase's <system-out>, by the absolute path the run gives it. The
// whole run's files (--capture) are attached to the testsuite the same way,
// in its own <system-out> after the testcases (Jenkins reads it there;
// GitLab reads testcases' alone).
import type { CaseResult, SuiteReport } from '../case-result.js';

export function escapeXml(text: string): string {
  // Characters XML 1.0 does not allow at all are dropped; the five specials escaped.
  // eslint-disable-next-line no-control-regex
  const allowed = text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, '');
  return allowed
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

function seconds(ms: number): string {
  return (ms / 1000).toFixed(3);
}

function testcase(result: CaseResult, className: string): string {
  const open = `    <testcase classname="${escapeXml(className)}" name="${escapeXml(result.name)}" time="${seconds(result.ms)}"`;
  // JUnit's order: the verdict, then <system-out>.
  const children = [verdict(result), attachment(result)].filter((child) => child !== undefined);
  return children.length === 0 ? `${open}/>` : [`${open}>`, ...children, '    </testcase>'].join('\n');
}

function verdict(result: CaseResult): string | undefined {
  const details = `step: ${result.step}; expected: ${result.expected}; got: ${result.got}`;
  switch (result.result) {
    case 'pass':
      return undefined;
    case 'skip':
      return `      <skipped message="${escapeXml(result.reason ?? 'skipped')}"/>`;
    case 'fail':
      return `      <failure message="${escapeXml(result.reason ?? 'failed')}">${escapeXml(details)}</failure>`;
  }
}

function attachment(result: CaseResult): string | undefined {
  if (result.capture === undefined) return undefined;
  return `      <system-out>${attachmentLine(result.capture)}</system-out>`;
}

function attachmentLine(path: string): string {
  return `[[ATTACHMENT|${escapeXml(path)}]]`;
}

/** The testsuite's <system-out>: the whole run's capture files, if any. */
function suiteAttachments(paths: readonly string[]): string[] {
  if (paths.length === 0) return [];
  return [`    <system-out>${paths.map(attachmentLine).join('\n')}</system-out>`];
}

export interface JunitOptions {
  /** The whole run's capture files (--capture), absolute paths, oldest first. */
  readonly runCaptures?: readonly string[];
}

export function renderJunit(report: SuiteReport, options: JunitOptions = {}): string {
  const { summary } = report;
  const suiteName = `parkbench conformance (${summary.target}, module ${summary.module_id})`;
  const className = `conformance.${summary.target}`;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="parkbench conformance" tests="${summary.total}" failures="${summary.failed}" skipped="${summary.skipped}" time="${seconds(summary.ms)}">`,
    `  <testsuite name="${escapeXml(suiteName)}" tests="${summary.total}" failures="${summary.failed}" errors="0" skipped="${summary.skipped}" time="${seconds(summary.ms)}">`,
    ...report.results.map((result) => testcase(result, className)),
    ...suiteAttachments(options.runCaptures ?? []),
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}
