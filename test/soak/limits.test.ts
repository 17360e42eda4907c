// The limit expressions (soak/limits.ts), the --limits file, --duration and
// the statistics the limits are judged on: pure, no box.
import test from 'ava';
import { judge, LimitError, parseLimit, parseLimits, withDefaultLimits } from '../../soak/limits.js';
import { parseLimitsFile } from '../../soak/limits-file.js';
import { DurationError, parseDuration } from '../../soak/duration.js';
import { nearestRank, statisticsOf } from '../../soak/statistics.js';

test('an expression is measure.statistic OP number; failures is a count without a statistic', (t) => {
  t.like(parseLimit('answer_ms.p99<=250'), {
    kind: 'measure',
    measure: 'answer_ms',
    statistic: 'p99',
    op: '<=',
    value: 250,
  });
  t.like(parseLimit(' battery_mv.drop < 40.5 '), {
    measure: 'battery_mv',
    statistic: 'drop',
    op: '<',
    value: 40.5,
    text: 'battery_mv.drop<40.5',
  });
  t.like(parseLimit('drift_s.max>=-2'), { op: '>=', value: -2 });
  t.like(parseLimit('failures==0'), { kind: 'failures', op: '==', value: 0, text: 'failures==0' });
  for (const op of ['<', '<=', '>', '>=', '==', '!=']) t.is(parseLimit(`cycle_ms.mean${op}1`).kind, 'measure');
});

test('a bad expression is a LimitError of one line naming it', (t) => {
  for (const [expression, says] of [
    ['answer_ms.p99=<250', /is not measure\.statistic OP number/],
    ['answer_ms<=250', /answer_ms needs a statistic/],
    ['answer_ms.p42<=250', /unknown statistic "p42"/],
    ['latency_ms.p99<=250', /unknown measure "latency_ms"/],
    ['failures.p99==0', /failures is a count/],
    ['answer_ms.p99<=fast', /is not measure/],
    ['', /is not measure/],
  ] as const) {
    const error = t.throws(() => parseLimit(expression), { instanceOf: LimitError });
    t.regex(error.message, says, expression);
    t.false(error.message.includes('\n'));
  }
});

test('failures==0 joins limits that do not bound the failures', (t) => {
  t.deepEqual(
    withDefaultLimits([]).map((each) => each.text),
    ['failures==0'],
  );
  t.deepEqual(
    withDefaultLimits(parseLimits(['answer_ms.p99<=250'])).map((each) => each.text),
    ['failures==0', 'answer_ms.p99<=250'],
  );
  t.deepEqual(
    withDefaultLimits(parseLimits(['failures<=5'])).map((each) => each.text),
    ['failures<=5'],
  );
});

test('judge: each limit a verdict with the measured figure; nothing measured fails', (t) => {
  const values = Float64Array.from([10, 20, 30, 40, Number.NaN]);
  const stats = statisticsOf(values);
  const empty = statisticsOf([]);
  const measurements = { answer_ms: stats, open_ms: empty, cycle_ms: stats, battery_mv: stats, drift_s: stats };
  t.deepEqual(
    judge(parseLimits(['answer_ms.max<=40', 'answer_ms.p50<20', 'open_ms.max<=1', 'failures!=0']), measurements, 0),
    [
      { limit: 'answer_ms.max<=40', actual: 40, passed: true },
      { limit: 'answer_ms.p50<20', actual: 20, passed: false },
      { limit: 'open_ms.max<=1', actual: null, passed: false },
      { limit: 'failures!=0', actual: 0, passed: false },
    ],
  );
});

test('statistics: nearest-rank percentiles, mean, drop (first minus last), NaN left out', (t) => {
  const values = Float64Array.from({ length: 100 }, (_, index) => 100 - index);
  values[50] = Number.NaN;
  const stats = statisticsOf(values);
  t.is(stats.count, 99);
  t.is(stats.min, 1);
  t.is(stats.max, 100);
  t.is(stats.drop, 99);
  t.is(stats.p99, 100); // rank ceil(0.99 × 99) = 99: the largest
  t.is(nearestRank([1, 2, 3, 4], 50), 2);
  t.is(nearestRank([1, 2, 3, 4], 51), 3);
  t.deepEqual(statisticsOf([]), {
    count: 0,
    min: null,
    max: null,
    p50: null,
    p95: null,
    p99: null,
    mean: null,
    drop: null,
  });
});

test('--limits FILE: a YAML list, at the top or under limits:, quoted or not, comments allowed', (t) => {
  const text =
    "# the bench's limits\nlimits:\n  - 'answer_ms.p99<=250'\n  - \"battery_mv.drop<=40\"  # a cell\n\n  - failures<=2\n";
  t.deepEqual(
    parseLimitsFile(text, 'limits.yaml').map((each) => each.text),
    ['answer_ms.p99<=250', 'battery_mv.drop<=40', 'failures<=2'],
  );
  t.is(parseLimitsFile('- cycle_ms.max<=900\n', 'l.yaml').length, 1);
  t.deepEqual(
    parseLimitsFile('limits: [answer_ms.p50<=5, failures==0]\n', 'l.yaml').map((each) => each.text),
    ['answer_ms.p50<=5', 'failures==0'],
    'a flow list, as YAML allows',
  );
  t.throws(() => parseLimitsFile('limits: [a]\n', 'l.yaml'), {
    instanceOf: LimitError,
    message: /^l\.yaml line 1: limit "a"/,
  });
  t.throws(() => parseLimitsFile('limits:\n  - failures==0\n  - 42\n', 'l.yaml'), {
    instanceOf: LimitError,
    message: /^l\.yaml line 3: not a limit expression/,
  });
  t.throws(() => parseLimitsFile('\nanswer_ms: 5\n', 'l.yaml'), {
    instanceOf: LimitError,
    message: /^l\.yaml line 2: not a list of expressions/,
  });
  t.throws(() => parseLimitsFile('- [unclosed\n', 'l.yaml'), { instanceOf: LimitError, message: /^l\.yaml line \d: / });
  t.throws(() => parseLimitsFile('- answer_ms.p99<=250\n- nope\n', 'l.yaml'), {
    instanceOf: LimitError,
    message: /^l\.yaml line 2: limit "nope"/,
  });
  t.throws(() => parseLimitsFile('# nothing\n', 'l.yaml'), { instanceOf: LimitError, message: /no limit in it/ });
});

test('--duration: 30s, 10m, 8h, 1h30m; anything else one line', (t) => {
  t.is(parseDuration('30s'), 30_000);
  t.is(parseDuration('10m'), 600_000);
  t.is(parseDuration('8h'), 28_800_000);
  t.is(parseDuration('1h30m'), 5_400_000);
  t.is(parseDuration('1.5s'), 1_500);
  for (const bad of ['30', '10 minutes', '0s', '-5m', '8d', ''])
    t.throws(() => parseDuration(bad), { instanceOf: DurationError, message: /no duration/ }, bad);
});
