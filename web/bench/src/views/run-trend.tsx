// One case's time (a soak limit: its measured value) across a box's runs,
// oldest to newest, drawn by uPlot; the runs where it failed marked red. The
// results of each run the history lists (ended ones, up to TREND_RUNS) are
// read once each (GET /api/operator/runs/:id).
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import type { OperatorApi } from '../operator-api';
import type { RunView } from '../types';

/** Runs whose results the trend reads at most (the newest of the history). */
export const TREND_RUNS = 50;

interface Props {
  api: OperatorApi;
  /** The box's runs, newest first (the history shown). */
  runs: readonly RunView[];
}

interface Point {
  second: number;
  value: number;
  failed: boolean;
}

/** The figure a result plots: a limit's value when it has one, else the case's ms. */
function plotted(run: RunView, name: string): { value: number; failed: boolean } | null {
  const result = run.results?.find((candidate) => candidate.name === name);
  if (result === undefined) return null;
  const value = result.value ?? result.ms;
  return Number.isFinite(value) ? { value, failed: result.result === 'fail' } : null;
}

/** Every case or limit name of these runs, the newest run's order first. */
function namesOf(details: readonly RunView[]): string[] {
  const names: string[] = [];
  const seen = new Set<string>();
  for (const run of details)
    for (const result of run.results ?? []) {
      if (seen.has(result.name)) continue;
      seen.add(result.name);
      names.push(result.name);
    }
  return names;
}

export function RunTrend({ api, runs }: Props) {
  const [details, setDetails] = useState<ReadonlyMap<string, RunView>>(new Map());
  const [error, setError] = useState<string | null>(null);
  const [name, setName] = useState<string | null>(null);
  const asked = useRef(new Set<string>());

  const ended = runs.filter((run) => run.state !== 'running').slice(0, TREND_RUNS);
  const wanted = ended.filter((run) => !asked.current.has(run.id)).map((run) => run.id);
  useEffect(() => {
    if (wanted.length === 0) return;
    for (const id of wanted) asked.current.add(id);
    Promise.all(wanted.map((id) => api.get<RunView>(`/runs/${encodeURIComponent(id)}`)))
      .then((fetched) =>
        setDetails((previous) => {
          const next = new Map(previous);
          for (const run of fetched) next.set(run.id, run);
          return next;
        }),
      )
      .catch((failure: unknown) =>
        setError(failure instanceof Error ? failure.message : 'The runs could not be read.'),
      );
  }, [wanted.join(',')]);

  const known = ended.map((run) => details.get(run.id)).filter((run): run is RunView => run !== undefined);
  const names = namesOf(known);
  // At first the first case that failed in one of them: the one worth a look.
  const failing = names.find((candidate) =>
    known.some((run) => run.results?.some((r) => r.name === candidate && r.result === 'fail')),
  );
  const chosen = name !== null && names.includes(name) ? name : (failing ?? names[0] ?? null);
  const isLimit =
    chosen !== null && known.some((run) => run.results?.some((r) => r.name === chosen && r.value !== null));
  const points: Point[] = [];
  if (chosen !== null)
    for (const run of [...known].reverse()) {
      const point = plotted(run, chosen);
      if (point !== null) points.push({ second: Date.parse(run.started_at) / 1000, ...point });
    }

  return (
    <div class="trend">
      <h3>Trend</h3>
      {error !== null && (
        <p class="action-result error" role="status">
          {error}
        </p>
      )}
      {names.length === 0 ? (
        <p class="muted">{known.length < ended.length ? 'Reading the runs…' : 'No case or limit in these runs yet.'}</p>
      ) : (
        <>
          <label class="trend-pick">
            Case or limit{' '}
            <select
              data-trend-select
              value={chosen ?? ''}
              onChange={(event) => setName((event.target as HTMLSelectElement).value)}
            >
              {names.map((option) => (
                <option key={option} value={option}>
                  {option}
                </option>
              ))}
            </select>
          </label>
          <TrendChart points={points} unit={isLimit ? 'value' : 'ms'} name={chosen ?? ''} />
        </>
      )}
    </div>
  );
}

function dataOf(points: readonly Point[]): uPlot.AlignedData {
  return [
    points.map((point) => point.second),
    points.map((point) => point.value),
    points.map((point) => (point.failed ? point.value : null)),
  ];
}

function TrendChart({ points, unit, name }: { points: readonly Point[]; unit: string; name: string }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);

  useEffect(() => {
    const element = box.current;
    if (element === null) return undefined;
    const made = new uPlot(
      {
        width: Math.max(200, element.clientWidth),
        height: 200,
        legend: { show: true },
        cursor: { drag: { x: false, y: false } },
        scales: { x: { time: true }, y: { auto: true } },
        series: [
          {},
          { label: unit, stroke: '#2563eb', width: 2, points: { show: true, size: 6 } },
          {
            label: 'failed',
            stroke: '#b91c1c',
            fill: undefined,
            paths: () => null,
            points: { show: true, size: 10, stroke: '#b91c1c', fill: '#b91c1c' },
          },
        ],
        axes: [{}, { label: unit, size: 70 }],
      },
      dataOf(points),
      element,
    );
    plot.current = made;
    const resize = new ResizeObserver(() => made.setSize({ width: Math.max(200, element.clientWidth), height: 200 }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      made.destroy();
      plot.current = null;
    };
  }, [unit]);

  useEffect(() => {
    plot.current?.setData(dataOf(points));
  }, [points.map((point) => `${point.second}:${point.value}:${point.failed ? 1 : 0}`).join(',')]);

  const failures = points.filter((point) => point.failed).length;
  return (
    <div
      class="chart"
      ref={box}
      role="img"
      aria-label={`${name}: ${unit} across ${points.length} runs, ${failures} failed`}
      data-trend={name}
      data-points={points.length}
      data-failures={failures}
    />
  );
}
