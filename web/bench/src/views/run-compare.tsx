// Two runs of a box side by side (GET /api/operator/runs/compare): A is the
// base (before), B the other (after). The cases come as the API orders them,
// regressions first; then the counts per change and the figures that moved
// (duration, counts, a case's time that moved by more than a quarter).
import { useEffect, useState } from 'preact/hooks';
import { dayTime, signed } from '../format';
import type { OperatorApi } from '../operator-api';
import type { ComparedResult, RunComparison, RunView } from '../types';

interface Props {
  api: OperatorApi;
  a: string;
  b: string;
  close: () => void;
}

const CHANGES = ['regressed', 'fixed', 'new', 'gone', 'same'] as const;

function Side({ side }: { side: ComparedResult | null }) {
  if (side === null) return <span class="muted">-</span>;
  return (
    <>
      <span class={`result ${side.result}`}>{side.result}</span>{' '}
      <span class="muted nowrap">
        {Math.round(side.ms)} ms{side.value !== null ? ` · ${side.value}` : ''}
      </span>
    </>
  );
}

/** A's and B's reasons under the case's name (the result columns stay narrow). */
function Reasons({ a, b }: { a: ComparedResult | null; b: ComparedResult | null }) {
  const lines = (
    [
      ['A', a],
      ['B', b],
    ] as const
  ).filter(([, side]) => side !== null && side.reason !== null && side.reason !== '');
  return (
    <>
      {lines.map(([label, side]) => (
        <div key={label} class="muted reason-line" data-reason={label.toLowerCase()}>
          {label}: {side?.reason}
        </div>
      ))}
    </>
  );
}

function RunName({ run }: { run: RunView }) {
  const firmware = run.labels['firmware'];
  return (
    <span class="wrap">
      {run.state} {run.kind}, {dayTime(run.started_at)}
      {firmware !== undefined ? `, firmware ${firmware}` : ''}
    </span>
  );
}

function figure(value: number | null): string {
  return value === null ? '-' : String(Math.round(value * 100) / 100);
}

export function RunCompare({ api, a, b, close }: Props) {
  const [comparison, setComparison] = useState<RunComparison | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    const query = new URLSearchParams({ a, b });
    api
      .get<RunComparison>(`/runs/compare?${query.toString()}`)
      .then(setComparison)
      .catch((failure: unknown) =>
        setError(failure instanceof Error ? failure.message : 'The runs could not be compared.'),
      );
  }, [a, b]);

  return (
    <div class="compare" data-compare data-a={a} data-b={b}>
      <h3 class="panel-head">
        <span>Comparison</span>
        <button type="button" data-action="compare-close" onClick={close}>
          Close
        </button>
      </h3>
      {error !== null && (
        <p class="action-result error" role="status" data-compare-error>
          {error}
        </p>
      )}
      {comparison === null && error === null && <p class="muted">Comparing…</p>}
      {comparison !== null && (
        <>
          <p class="muted">
            A (base): <RunName run={comparison.a} />
            <br />
            B: <RunName run={comparison.b} />
          </p>
          <p
            class="counts"
            data-counts
            data-regressed={comparison.counts.regressed}
            data-fixed={comparison.counts.fixed}
            data-new={comparison.counts.new}
            data-gone={comparison.counts.gone}
            data-same={comparison.counts.same}
          >
            {CHANGES.map((change) => (
              <span key={change} class={`change ${change}`}>
                {comparison.counts[change]} {change}
              </span>
            ))}
          </p>
          <div class="table-scroll">
            <table>
              <thead>
                <tr>
                  <th>Change</th>
                  <th>Case</th>
                  <th>A</th>
                  <th>B</th>
                  <th>Δ ms</th>
                </tr>
              </thead>
              <tbody>
                {comparison.cases.map((row, index) => (
                  <tr key={`${index}-${row.name}`} data-compare-case={row.name} data-change={row.change}>
                    <td class={`change ${row.change}`}>{row.change}</td>
                    <td class="case-name">
                      {row.name}
                      <Reasons a={row.a} b={row.b} />
                    </td>
                    <td>
                      <Side side={row.a} />
                    </td>
                    <td>
                      <Side side={row.b} />
                    </td>
                    <td>{signed(row.ms_delta)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {comparison.figures.length > 0 && (
            <div class="table-scroll">
              <table class="figures">
                <thead>
                  <tr>
                    <th>Figure</th>
                    <th>A</th>
                    <th>B</th>
                    <th>Δ</th>
                  </tr>
                </thead>
                <tbody>
                  {comparison.figures.map((row) => (
                    <tr key={row.name} data-figure={row.name}>
                      <td class="wrap">{row.name}</td>
                      <td>{figure(row.a)}</td>
                      <td>{figure(row.b)}</td>
                      <td>{signed(row.delta)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </>
      )}
    </div>
  );
}
