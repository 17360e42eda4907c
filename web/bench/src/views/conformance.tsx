// Conformance runs started from the page: their cases fill in live (the
// stream's `conformance` events; views/app.tsx polls every 500 ms only while
// the stream is down), a running one can be cancelled (POST
// .../conformance/:run_id/cancel), then the JUnit and JSON files, the same
// the CLI writes, download with the token.
import type { ActionResult as Result } from '../store';
import type { ConformanceRun } from '../types';
import { ActionResult } from './action-result';

interface Props {
  runs: ReadonlyMap<number, ConformanceRun>;
  /** The results of the runs' cancel buttons, by `conformance:<run id>`. */
  results: ReadonlyMap<string, Result>;
  cancel: (run: ConformanceRun) => void;
  download: (runId: string, file: 'junit.xml' | 'report.json') => void;
}

export function Conformance({ runs, results, cancel, download }: Props) {
  const shown = [...runs.values()].sort((a, b) => (a.started_at < b.started_at ? 1 : -1));
  if (shown.length === 0) return null;
  return (
    <section class="panel" aria-labelledby="conformance-title">
      <h2 id="conformance-title">Conformance</h2>
      {shown.map((run) => {
        const id = String(run.id);
        const passed = run.cases.filter((c) => c.result === 'pass').length;
        return (
          <div class="run" key={id} data-conformance-run={id} data-state={run.state}>
            <h3>
              Box {run.module_id}: <span class={`run-state ${run.state}`}>{run.state}</span>{' '}
              <span class="muted">
                {passed}/{run.cases.length} passed
              </span>
              {run.state === 'running' && (
                <>
                  {' '}
                  <button
                    type="button"
                    class="cancel"
                    data-action="conformance-cancel"
                    onClick={() => cancel(run)}
                    disabled={results.get(`conformance:${id}`)?.outcome === 'pending'}
                  >
                    Cancel
                  </button>
                </>
              )}
            </h3>
            {run.error !== null && run.error !== undefined && run.error !== '' && (
              <p class="muted wrap" data-run-error>
                {run.error}
              </p>
            )}
            <ActionResult result={results.get(`conformance:${id}`)} />
            <ol class="cases">
              {run.cases.map((c, index) => (
                <li key={`${index}-${c.name}`} data-case={c.name} data-result={c.result}>
                  <span class={`result ${c.result}`}>{c.result}</span> <span class="wrap">{c.name}</span>
                  {c.step !== undefined && <span class="muted"> · {c.step}</span>}
                  {c.result === 'fail' && (
                    <span class="muted wrap">
                      {' '}
                      · expected {c.expected ?? '?'}, got {c.got ?? '?'}
                    </span>
                  )}
                  {c.reason !== null && c.reason !== undefined && c.reason !== '' && (
                    <span class="muted wrap"> · {c.reason}</span>
                  )}
                </li>
              ))}
            </ol>
            {run.state !== 'running' && (
              <p class="downloads">
                <a
                  data-download="junit"
                  href={`/api/operator/conformance/${encodeURIComponent(id)}/junit.xml`}
                  onClick={(event) => {
                    event.preventDefault();
                    download(id, 'junit.xml');
                  }}
                >
                  JUnit XML
                </a>{' '}
                <a
                  data-download="json"
                  href={`/api/operator/conformance/${encodeURIComponent(id)}/report.json`}
                  onClick={(event) => {
                    event.preventDefault();
                    download(id, 'report.json');
                  }}
                >
                  JSON report
                </a>
              </p>
            )}
          </div>
        );
      })}
    </section>
  );
}
