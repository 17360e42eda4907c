// The live box-log stream, newest first, the newest MAX_LOG_ROWS kept. At
// 1,000 logs a second half the list is new at every update, so a row is one
// element holding one line of text in fixed-width columns (not a table row
// of seven cells: perf/dashboard.ts measured the cells' style and layout as
// the longest part of a frame), in a fixed-height, strictly contained list
// whose rows out of view are skipped (`content-visibility: auto`). A row is
// a class with shouldComponentUpdate: a log never changes.
import { Component } from 'preact';
import { clockTime, latency } from '../format';
import { MAX_LOG_ROWS } from '../store';
import type { BoxLog } from '../types';

/** Columns and their widths in characters. */
const COLUMNS: readonly [string, number][] = [
  ['Time', 8],
  ['Box', 7],
  ['Kind', 7],
  ['Status', 14],
  ['Verified', 8],
  ['Via', 4],
  ['Latency', 7],
];

function line(cells: readonly string[]): string {
  return cells.map((cell, index) => cell.padEnd(COLUMNS[index]?.[1] ?? 0)).join(' ');
}

export function BoxLogs({ logs, dropped }: { logs: readonly BoxLog[]; dropped: number }) {
  return (
    <section class="panel" aria-labelledby="box-logs-title">
      <h2 id="box-logs-title">
        Box logs{' '}
        <span class="muted">
          newest {MAX_LOG_ROWS} kept{dropped > 0 ? ` · ${dropped} skipped by the server` : ''}
        </span>
      </h2>
      <div class="logs">
        <div class="log-row log-head" aria-hidden="true">
          {line(COLUMNS.map(([name]) => name))}
        </div>
        <ol class="log-body" data-stream="box-logs" tabIndex={0} aria-label="box logs, newest first">
          {logs.map((log) => (
            <LogRow key={log.id} log={log} />
          ))}
        </ol>
      </div>
    </section>
  );
}

class LogRow extends Component<{ log: BoxLog }> {
  override shouldComponentUpdate(next: { log: BoxLog }): boolean {
    return next.log !== this.props.log;
  }

  render() {
    const { log } = this.props;
    const text = line([
      clockTime(log.received_at),
      String(log.equipment_id),
      log.type,
      log.status ?? '-',
      log.verified ? 'yes' : 'no',
      log.via ?? log.source,
      latency(log.latency_ms),
    ]);
    return (
      <li class="log-row" data-box-log-id={log.id} data-status={log.verified ? (log.status ?? '') : ''}>
        {text}
      </li>
    );
  }
}
