// The report page's plots, as inline SVG made here (the page loads nothing):
// a measure per cycle, decimated to its min and max per pixel column so a
// run of any length draws in a few kilobytes, and a histogram. Limits are
// drawn as dashed red lines.
import { escapeXml } from '../../conformance/reports/junit.js';

export const PLOT_WIDTH = 900;
const HEIGHT = 240;
const MARGIN = { left: 64, right: 16, top: 16, bottom: 36 };
const INNER_WIDTH = PLOT_WIDTH - MARGIN.left - MARGIN.right;
const INNER_HEIGHT = HEIGHT - MARGIN.top - MARGIN.bottom;

export interface PlotLimit {
  readonly value: number;
  readonly label: string;
}

export interface SeriesPlot {
  /** data-plot of the <svg>, for tests and readers. */
  readonly id: string;
  readonly title: string;
  readonly unit: string;
  /** In cycle order; NaN: not measured. */
  readonly values: ArrayLike<number>;
  readonly limits?: readonly PlotLimit[];
}

/** Min and max of each pixel column's cycles: [column, min, max], columns with no value left out. */
export function decimate(values: ArrayLike<number>, columns: number): [number, number, number][] {
  const out: [number, number, number][] = [];
  const count = values.length;
  if (count === 0) return out;
  const used = Math.min(columns, count);
  for (let column = 0; column < used; column++) {
    const from = Math.floor((column * count) / used);
    const to = Math.floor(((column + 1) * count) / used);
    let min = Number.POSITIVE_INFINITY;
    let max = Number.NEGATIVE_INFINITY;
    for (let index = from; index < to; index++) {
      const value = values[index] ?? Number.NaN;
      if (Number.isNaN(value)) continue;
      if (value < min) min = value;
      if (value > max) max = value;
    }
    if (min <= max) out.push([column, min, max]);
  }
  return out;
}

export function seriesPlot(plot: SeriesPlot): string {
  const columns = decimate(plot.values, INNER_WIDTH);
  const limits = plot.limits ?? [];
  const [low, high] = range(columns.flatMap(([, min, max]) => [min, max]).concat(limits.map((each) => each.value)));
  const count = plot.values.length;
  const used = Math.min(INNER_WIDTH, Math.max(1, count));
  const x = (column: number): number => MARGIN.left + ((column + 0.5) * INNER_WIDTH) / used;
  const y = scale(low, high);
  const path = columns
    .map(
      ([column, min, max], index) =>
        `${index === 0 ? 'M' : 'L'}${fix(x(column))} ${fix(y(min))}L${fix(x(column))} ${fix(y(max))}`,
    )
    .join('');
  const xTicks = ticks(1, Math.max(1, count)).map((cycle) => ({
    at: MARGIN.left + ((cycle - 0.5) / Math.max(1, count)) * INNER_WIDTH,
    label: String(Math.round(cycle)),
  }));
  return frame(plot.id, plot.title, `cycle`, plot.unit, columns.length, low, high, xTicks, [
    `<path class="series" d="${path}" fill="none" stroke="#1f6feb" stroke-width="1"/>`,
    ...limits.map((limit) => horizontalLimit(y(limit.value), limit.label)),
  ]);
}

/** Bars of how many cycles fell in each bin, between the lowest and the highest value (and the limits). */
export function histogramPlot(plot: SeriesPlot & { readonly bins?: number }): string {
  const measured: number[] = [];
  for (let index = 0; index < plot.values.length; index++) {
    const value = plot.values[index] ?? Number.NaN;
    if (!Number.isNaN(value)) measured.push(value);
  }
  const limits = plot.limits ?? [];
  const [low, high] = range(measured.concat(limits.map((each) => each.value)));
  const bins = plot.bins ?? 60;
  const counts = new Array<number>(bins).fill(0);
  for (const value of measured) {
    const bin = Math.min(bins - 1, Math.floor(((value - low) / (high - low)) * bins));
    counts[bin] = (counts[bin] ?? 0) + 1;
  }
  const most = Math.max(1, ...counts);
  const x = (value: number): number => MARGIN.left + ((value - low) / (high - low)) * INNER_WIDTH;
  const y = scale(0, most);
  const width = INNER_WIDTH / bins;
  const bars = counts
    .map((count, bin) =>
      count === 0
        ? ''
        : `<rect x="${fix(MARGIN.left + bin * width)}" y="${fix(y(count))}" width="${fix(Math.max(1, width - 1))}" height="${fix(y(0) - y(count))}" fill="#1f6feb"><title>${count}</title></rect>`,
    )
    .join('');
  const xTicks = ticks(low, high).map((value) => ({ at: x(value), label: label(value) }));
  return frame(plot.id, plot.title, plot.unit, 'cycles', measured.length, 0, most, xTicks, [
    bars,
    ...limits.map((limit) => verticalLimit(x(limit.value), limit.label)),
  ]);
}

function frame(
  id: string,
  title: string,
  xUnit: string,
  yUnit: string,
  points: number,
  low: number,
  high: number,
  xTicks: readonly { at: number; label: string }[],
  body: readonly string[],
): string {
  const y = scale(low, high);
  const yTicks = ticks(low, high)
    .map(
      (value) =>
        `<line x1="${MARGIN.left}" x2="${PLOT_WIDTH - MARGIN.right}" y1="${fix(y(value))}" y2="${fix(y(value))}" stroke="#eee"/><text x="${MARGIN.left - 6}" y="${fix(y(value) + 4)}" text-anchor="end">${label(value)}</text>`,
    )
    .join('');
  const xLabels = xTicks
    .map(
      (tick) =>
        `<text x="${fix(tick.at)}" y="${HEIGHT - MARGIN.bottom + 16}" text-anchor="middle">${escapeXml(tick.label)}</text>`,
    )
    .join('');
  return [
    `<figure><figcaption>${escapeXml(title)}</figcaption>`,
    `<svg data-plot="${escapeXml(id)}" data-points="${points}" viewBox="0 0 ${PLOT_WIDTH} ${HEIGHT}" width="${PLOT_WIDTH}" height="${HEIGHT}" role="img" aria-label="${escapeXml(title)}" font-size="11" font-family="sans-serif">`,
    yTicks,
    `<rect x="${MARGIN.left}" y="${MARGIN.top}" width="${INNER_WIDTH}" height="${INNER_HEIGHT}" fill="none" stroke="#999"/>`,
    ...body,
    xLabels,
    `<text x="${PLOT_WIDTH - MARGIN.right}" y="${HEIGHT - 4}" text-anchor="end">${escapeXml(xUnit)}</text>`,
    `<text x="4" y="${MARGIN.top - 4}">${escapeXml(yUnit)}</text>`,
    points === 0 ? `<text x="${PLOT_WIDTH / 2}" y="${HEIGHT / 2}" text-anchor="middle">nothing measured</text>` : '',
    '</svg></figure>',
  ].join('');
}

function horizontalLimit(at: number, text: string): string {
  return `<line class="limit" x1="${MARGIN.left}" x2="${PLOT_WIDTH - MARGIN.right}" y1="${fix(at)}" y2="${fix(at)}" stroke="#d1242f" stroke-dasharray="6 4"/><text x="${PLOT_WIDTH - MARGIN.right - 4}" y="${fix(at - 4)}" text-anchor="end" fill="#d1242f">${escapeXml(text)}</text>`;
}

function verticalLimit(at: number, text: string): string {
  return `<line class="limit" x1="${fix(at)}" x2="${fix(at)}" y1="${MARGIN.top}" y2="${HEIGHT - MARGIN.bottom}" stroke="#d1242f" stroke-dasharray="6 4"/><text x="${fix(at - 4)}" y="${MARGIN.top + 12}" text-anchor="end" fill="#d1242f">${escapeXml(text)}</text>`;
}

/** Low and high of the values, never equal (a flat series gets a band around it). */
function range(values: readonly number[]): [number, number] {
  if (values.length === 0) return [0, 1];
  let low = Number.POSITIVE_INFINITY;
  let high = Number.NEGATIVE_INFINITY;
  for (const value of values) {
    if (value < low) low = value;
    if (value > high) high = value;
  }
  if (low === high) return [low - 1, high + 1];
  const pad = (high - low) * 0.05;
  return [low - pad, high + pad];
}

function scale(low: number, high: number): (value: number) => number {
  return (value) => MARGIN.top + INNER_HEIGHT - ((value - low) / (high - low)) * INNER_HEIGHT;
}

/** About five round values between low and high. */
function ticks(low: number, high: number): number[] {
  const span = high - low;
  if (!(span > 0)) return [low];
  const rough = span / 5;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 5, 10].map((each) => each * power).find((each) => each >= rough) ?? rough;
  const out: number[] = [];
  for (let value = Math.ceil(low / step) * step; value <= high + step * 1e-9; value += step) out.push(value);
  return out;
}

function label(value: number): string {
  return Math.abs(value) >= 100 || Number.isInteger(value) ? String(Math.round(value)) : value.toFixed(1);
}

function fix(value: number): string {
  return value.toFixed(1);
}
