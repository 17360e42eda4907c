// junit.xml: one testcase per limit (its verdict, the run's figure in the
// failure's message), and the put-back of the box's issuer keys after a
// signed run.
import { escapeXml } from '../../conformance/reports/junit.js';
import type { SoakReport } from '../run-soak.js';

export function renderSoakJunit(report: SoakReport): string {
  const { summary } = report;
  const className = `soak.${summary.target}`;
  const seconds = (summary.ms / 1000).toFixed(3);
  const cases = report.verdicts.map((verdict) => {
    const open = `    <testcase classname="${className}" name="${escapeXml(verdict.limit)}" time="0"`;
    if (verdict.passed) return `${open}/>`;
    const got = verdict.actual === null ? 'nothing measured' : `measured ${verdict.actual}`;
    const message = `${verdict.limit}: ${got}`;
    return `${open}>\n      <failure message="${escapeXml(message)}">${escapeXml(`${message} over ${summary.cycles} cycles`)}</failure>\n    </testcase>`;
  });
  const putBack = report.putBack;
  if (putBack !== undefined) {
    const open = `    <testcase classname="${className}" name="${escapeXml(putBack.name)}" time="${(putBack.ms / 1000).toFixed(3)}"`;
    cases.push(
      putBack.result === 'fail'
        ? `${open}>\n      <failure message="${escapeXml(putBack.reason ?? 'failed')}">${escapeXml(`got: ${putBack.got}`)}</failure>\n    </testcase>`
        : `${open}/>`,
    );
  }
  const failed = report.verdicts.filter((verdict) => !verdict.passed).length + (putBack?.result === 'fail' ? 1 : 0);
  const name = `parkbench soak (${summary.target}, module ${summary.module_id}, ${summary.cycles} cycles)`;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="parkbench soak" tests="${cases.length}" failures="${failed}" time="${seconds}">`,
    `  <testsuite name="${escapeXml(name)}" tests="${cases.length}" failures="${failed}" errors="0" skipped="0" time="${seconds}">`,
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}
