// report.html: one page that loads nothing (no script, no network): the
// verdicts on top, then the answer time per cycle and its histogram with the
// limits drawn, the battery over the cycles, and the failures with their
// cycle, status and time. The plots are inline SVG (svg-plots.ts),
// decimated, so 100,000 cycles make a page of about the same size as 1,000.
import { describeStatus } from '../../conformance/expectations.js';
import { escapeXml } from '../../conformance/reports/junit.js';
import type { Measure } from '../limits.js';
import type { SoakReport } from '../run-soak.js';
import { histogramPlot, seriesPlot, type PlotLimit } from './svg-plots.js';

/** Failures listed on the page; report.json holds them all. */
export const LISTED_FAILURES = 1_000;

export function renderSoakHtml(report: SoakReport, title = 'parkbench soak'): string {
  const { summary } = report;
  const verdicts = report.verdicts
    .map(
      (verdict) =>
        `<tr data-verdict="${verdict.passed ? 'pass' : 'fail'}"><td class="${verdict.passed ? 'pass' : 'fail'}">${verdict.passed ? 'PASS' : 'FAIL'}</td><td><code>${escapeXml(verdict.limit)}</code></td><td>${verdict.actual === null ? 'nothing measured' : String(verdict.actual)}</td></tr>`,
    )
    .join('');
  const putBack =
    report.putBack === undefined
      ? ''
      : `<p data-put-back="${report.putBack.result}">${escapeXml(report.putBack.name)}: ${report.putBack.result === 'pass' ? 'yes' : escapeXml(report.putBack.reason ?? 'failed')}</p>`;
  const answer = report.log.column('answer_ms');
  const figures = [
    seriesPlot({
      id: 'answer',
      title: 'Answer time per cycle (min and max of each pixel column)',
      unit: 'ms',
      values: answer,
      limits: limitsOf(report, 'answer_ms'),
    }),
    histogramPlot({
      id: 'answer-histogram',
      title: 'Answer times',
      unit: 'ms',
      values: answer,
      limits: limitsOf(report, 'answer_ms'),
    }),
    seriesPlot({
      id: 'battery',
      title: 'Battery per cycle',
      unit: 'mV',
      values: report.log.column('battery_mv'),
      limits: limitsOf(report, 'battery_mv'),
    }),
  ];
  const failures = report.log.failures;
  const failureRows = failures
    .slice(0, LISTED_FAILURES)
    .map(
      (failure) =>
        `<tr><td>${failure.cycle}</td><td>${failure.status === null ? '-' : escapeXml(describeStatus(failure.status))}</td><td>${new Date(failure.at).toISOString()}</td><td>${escapeXml(failure.reason)}</td></tr>`,
    )
    .join('');
  const more =
    failures.length > LISTED_FAILURES
      ? `<p>and ${failures.length - LISTED_FAILURES} more (report.json lists them all)</p>`
      : '';
  const powerFailures = report.powerCycles.filter((each) => each.failure !== undefined);
  const stats = (['answer_ms', 'open_ms', 'cycle_ms', 'battery_mv', 'drift_s'] as const)
    .map((measure) => {
      const each = report.measurements[measure];
      const cell = (value: number | null): string => `<td>${value === null ? '-' : String(value)}</td>`;
      return `<tr><td><code>${measure}</code></td><td>${each.count}</td>${[each.min, each.p50, each.p95, each.p99, each.max, each.mean, each.drop].map(cell).join('')}</tr>`;
    })
    .join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeXml(title)}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#1f2328;max-width:960px}
table{border-collapse:collapse;margin:8px 0 16px}td,th{border:1px solid #d0d7de;padding:3px 8px;text-align:left}
.pass{color:#1a7f37;font-weight:bold}.fail{color:#d1242f;font-weight:bold}
figure{margin:16px 0}figcaption{font-weight:bold;margin-bottom:4px}
</style></head><body>
<h1 data-result="${summary.passed ? 'pass' : 'fail'}">${escapeXml(title)}: <span class="${summary.passed ? 'pass' : 'fail'}">${summary.passed ? 'PASSED' : 'FAILED'}</span></h1>
<p>${summary.cycles} cycles, ${summary.failures} ${summary.failures === 1 ? 'failure' : 'failures'}, ${(summary.ms / 1000).toFixed(1)} s (${summary.rate} cycles/s) over ${escapeXml(summary.target)}, module ${summary.module_id}, ${summary.access} access; ${summary.power_cycles} power cycles; started ${new Date(report.startedAt).toISOString()}${report.interrupted ? '; <strong>interrupted</strong>: the cycles after the last one did not run' : ''}</p>
<table id="verdicts"><tr><th>verdict</th><th>limit</th><th>measured</th></tr>${verdicts}</table>
${putBack}
<table id="measurements"><tr><th>measure</th><th>count</th><th>min</th><th>p50</th><th>p95</th><th>p99</th><th>max</th><th>mean</th><th>drop</th></tr>${stats}</table>
${figures.join('\n')}
<h2>Failures (${failures.length + powerFailures.length})</h2>
<table id="failures" data-failures="${failures.length}"><tr><th>cycle</th><th>status</th><th>time</th><th>reason</th></tr>${failureRows}${powerFailures
    .map((each) => `<tr><td>${each.beforeCycle}</td><td>-</td><td></td><td>${escapeXml(each.failure ?? '')}</td></tr>`)
    .join('')}</table>
${more}
</body></html>
`;
}

/** The thresholds of the limits on `measure` whose statistic is a value a cycle can have (not drop). */
function limitsOf(report: SoakReport, measure: Measure): PlotLimit[] {
  return report.limits.flatMap((limit) =>
    limit.kind === 'measure' && limit.measure === measure && limit.statistic !== 'drop'
      ? [{ value: limit.value, label: limit.text }]
      : [],
  );
}
