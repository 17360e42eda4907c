// The live box-log stream, newest first, the newest MAX_LOG_ROWS kept.
import { clockTime, latency } from '../format';
import { MAX_LOG_ROWS } from '../store';
import type { BoxLog } from '../types';

export function BoxLogs({ logs, dropped }: { logs: readonly BoxLog[]; dropped: number }) {
  return (
    <section class="panel" aria-labelledby="box-logs-title">
      <h2 id="box-logs-title">
        Box logs{' '}
        <span class="muted">
          newest {MAX_LOG_ROWS} kept{dropped > 0 ? ` · ${dropped} skipped by the server` : ''}
        </span>
      </h2>
      <div class="scroll">
        <table class="logs">
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Box</th>
              <th scope="col">Kind</th>
              <th scope="col">Status</th>
              <th scope="col">Verified</th>
              <th scope="col">Via</th>
              <th scope="col">Latency</th>
            </tr>
          </thead>
          <tbody data-stream="box-logs">
            {logs.map((log) => (
              <tr key={log.id} data-box-log-id={log.id} data-status={log.verified ? (log.status ?? '') : ''}>
                <td>{clockTime(log.received_at)}</td>
                <td>{log.equipment_id}</td>
                <td>{log.type}</td>
                <td class={log.status === null || log.status === 'OK' ? '' : 'bad'}>{log.status ?? '-'}</td>
                <td>{log.verified ? 'yes' : 'no'}</td>
                <td>{log.via ?? log.source}</td>
                <td>{latency(log.latency_ms)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
