// The limits a soak run is judged by: each an expression `measure.statistic
// OP number` (`answer_ms.p99<=250`), or `failures OP number` for the count
// of failed cycles. Pure: the command line (--limit, --limits FILE) and the
// bench file's `limits:` read them with `parseLimit`; `judge` turns each
// into a verdict against a run's measurements.

/** What each cycle measures (soak/README.md says how). */
export const MEASURES = ['answer_ms', 'open_ms', 'cycle_ms', 'battery_mv', 'drift_s'] as const;
export type Measure = (typeof MEASURES)[number];

/** `drop` is the first value minus the last (a battery that ran down, a clock that drifted). */
export const STATISTICS = ['min', 'max', 'p50', 'p95', 'p99', 'mean', 'drop'] as const;
export type Statistic = (typeof STATISTICS)[number];

export const OPERATORS = ['<=', '>=', '==', '!=', '<', '>'] as const;
export type Operator = (typeof OPERATORS)[number];

export type Limit =
  | {
      readonly kind: 'measure';
      readonly measure: Measure;
      readonly statistic: Statistic;
      readonly op: Operator;
      readonly value: number;
      /** The expression, written the one way (`answer_ms.p99<=250`). */
      readonly text: string;
    }
  | { readonly kind: 'failures'; readonly op: Operator; readonly value: number; readonly text: string };

/** What a run is judged by when no limit is given; `failures==0` also
 * joins limits that say nothing of failures, so failed cycles never pass
 * unnoticed (`failures<=5` allows some). */
export const DEFAULT_LIMITS: readonly string[] = ['failures==0'];

/** An expression that is no limit; the message is one line naming it. */
export class LimitError extends Error {
  override readonly name = 'LimitError';
}

const EXPRESSION = /^([a-z_]+)(?:\.([a-z0-9]+))?\s*(<=|>=|==|!=|<|>)\s*(-?\d+(?:\.\d+)?)$/;

export function parseLimit(expression: string): Limit {
  const trimmed = expression.trim();
  const match = EXPRESSION.exec(trimmed);
  const usage = `measure.statistic OP number, e.g. answer_ms.p99<=250, or failures==0`;
  if (match === null) throw new LimitError(`limit "${expression}" is not ${usage}`);
  const [, name = '', statistic, op = '', number = ''] = match;
  const value = Number(number);
  if (name === 'failures') {
    if (statistic !== undefined && statistic !== 'count')
      throw new LimitError(`limit "${expression}": failures is a count, written failures${op}${number}`);
    return { kind: 'failures', op: op as Operator, value, text: `failures${op}${number}` };
  }
  if (!isMeasure(name))
    throw new LimitError(`limit "${expression}": unknown measure "${name}" (${[...MEASURES, 'failures'].join(', ')})`);
  if (statistic === undefined)
    throw new LimitError(`limit "${expression}": ${name} needs a statistic (${STATISTICS.join(', ')})`);
  if (!isStatistic(statistic))
    throw new LimitError(`limit "${expression}": unknown statistic "${statistic}" (${STATISTICS.join(', ')})`);
  return {
    kind: 'measure',
    measure: name,
    statistic,
    op: op as Operator,
    value,
    text: `${name}.${statistic}${op}${number}`,
  };
}

/** Every expression, or a LimitError naming the first bad one. */
export function parseLimits(expressions: readonly string[]): Limit[] {
  return expressions.map(parseLimit);
}

/** `limits`, with `failures==0` first unless one of them bounds the failures. */
export function withDefaultLimits(limits: readonly Limit[]): Limit[] {
  if (limits.some((limit) => limit.kind === 'failures')) return [...limits];
  return [...parseLimits(DEFAULT_LIMITS), ...limits];
}

function isMeasure(name: string): name is Measure {
  return (MEASURES as readonly string[]).includes(name);
}

function isStatistic(name: string): name is Statistic {
  return (STATISTICS as readonly string[]).includes(name);
}

export function compare(actual: number, op: Operator, value: number): boolean {
  switch (op) {
    case '<':
      return actual < value;
    case '<=':
      return actual <= value;
    case '>':
      return actual > value;
    case '>=':
      return actual >= value;
    case '==':
      return actual === value;
    case '!=':
      return actual !== value;
  }
}

/** The statistics of one measure over a run; null where no cycle measured it. */
export type MeasureStatistics = Readonly<Record<Statistic, number | null>> & { readonly count: number };

/** One limit judged: `actual` is the run's figure (null: nothing was measured, a failed verdict). */
export interface LimitVerdict {
  readonly limit: string;
  readonly actual: number | null;
  readonly passed: boolean;
}

export function judge(
  limits: readonly Limit[],
  measurements: Readonly<Record<Measure, MeasureStatistics>>,
  failures: number,
): LimitVerdict[] {
  return limits.map((limit) => {
    const actual = limit.kind === 'failures' ? failures : measurements[limit.measure][limit.statistic];
    return { limit: limit.text, actual, passed: actual !== null && compare(actual, limit.op, limit.value) };
  });
}
