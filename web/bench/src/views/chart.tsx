// Commands and responses per second and the mean response latency over the
// last minute, drawn by uPlot (canvas; its stylesheet is bundled into the
// page's CSS file). The plot is made once and fed with setData.
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import type { ChartSeries } from '../store';

function dataOf(chart: ChartSeries): uPlot.AlignedData {
  return [chart.seconds, chart.commands, chart.responses, chart.latencyMs];
}

export function Chart({ chart }: { chart: ChartSeries }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);

  useEffect(() => {
    const element = box.current;
    if (element === null) return undefined;
    const made = new uPlot(
      {
        width: Math.max(200, element.clientWidth),
        height: 180,
        legend: { show: true },
        cursor: { drag: { x: false, y: false } },
        scales: { x: { time: true }, rate: { auto: true }, ms: { auto: true } },
        series: [
          {},
          { label: 'commands/s', scale: 'rate', stroke: '#2563eb', width: 2 },
          { label: 'responses/s', scale: 'rate', stroke: '#16a34a', width: 2 },
          { label: 'latency ms', scale: 'ms', stroke: '#d97706', width: 1.5, dash: [4, 4], spanGaps: true },
        ],
        axes: [
          {},
          { scale: 'rate', label: 'per second' },
          {
            scale: 'ms',
            // uPlot's Axis.Side is a const enum, which isolated modules cannot read: 1 is Right.
            // eslint-disable-next-line @typescript-eslint/no-unsafe-enum-assignment
            side: 1,
            label: 'ms',
            grid: { show: false },
          },
        ],
      },
      [[], [], [], []],
      element,
    );
    plot.current = made;
    const resize = new ResizeObserver(() => {
      made.setSize({ width: Math.max(200, element.clientWidth), height: 180 });
    });
    resize.observe(element);
    return () => {
      resize.disconnect();
      made.destroy();
      plot.current = null;
    };
  }, []);

  useEffect(() => {
    plot.current?.setData(dataOf(chart));
  }, [chart]);

  return (
    <section class="panel" aria-labelledby="chart-title">
      <h2 id="chart-title">Commands, responses and latency</h2>
      <div class="chart" ref={box} role="img" aria-label="commands and responses per second, latency in ms" />
    </section>
  );
}
