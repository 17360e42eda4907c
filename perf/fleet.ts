// npm run perf:fleet [-- --count 5000]
//
// A fleet of simulated boxes on one broker: how long they take to connect,
// how much memory each costs, and how fast every box answers one command
// each. Baseline, measured in the same run: the same number of bare MQTT.js
// clients (connected and subscribed like a box, nothing else) in a process
// of their own, so the ratio shows what the simulator adds to a client.
// Targets: 5,000 boxes, under 1 GiB resident for the whole fleet process,
// every box answering within 5 s of the commands being published.
import { startTsx, formatNumber } from './support/processes.js';

const count = Number(argument('--count') ?? 5_000);
const worker = new URL('./support/fleet-worker.ts', import.meta.url);
const broker = startTsx(new URL('./support/broker.ts', import.meta.url));
try {
  const port = Number((await broker.line(/^listening \d+$/, 30_000)).split(' ')[1]);
  const url = `mqtt://127.0.0.1:${port}`;
  console.log(`fleet benchmark: ${count} boxes on one aedes broker (${url}), 2-core machine`);

  const bare = await runWorker(['--mode', 'bare', '--url', url, '--count', String(count)]);
  const sim = await runWorker(['--mode', 'sim', '--url', url, '--count', String(count)]);

  console.log('');
  console.log(
    `baseline: ${count} bare MQTT clients: connected in ${formatNumber(bare.connectMs)} ms, ${formatNumber(bare.perClientKb, 1)} KiB each (RSS ${formatNumber(bare.rssMb)} MiB)`,
  );
  console.log(
    `fleet:    ${count} simulated boxes:  connected in ${formatNumber(sim.connectMs)} ms, ${formatNumber(sim.perClientKb, 1)} KiB each (RSS ${formatNumber(sim.rssMb)} MiB)`,
  );
  console.log(`          memory per box / per bare client: ${formatNumber(sim.perClientKb / bare.perClientKb, 2)}x`);
  console.log(
    `answers:  ${sim.answered}/${count} boxes answered one command each; all published in ${formatNumber(sim.publishMs)} ms`,
  );
  console.log(
    `          answer time after publish: p50 ${formatNumber(sim.p50, 1)} ms, p90 ${formatNumber(sim.p90, 1)} ms, p99 ${formatNumber(sim.p99, 1)} ms, max ${formatNumber(sim.max, 1)} ms`,
  );
  console.log(`          last answer ${formatNumber(sim.lastAnswerMs)} ms after the first command was published`);
  const memoryOk = sim.rssMb < 1024;
  const answersOk = sim.answered === count && sim.lastAnswerMs <= 5_000;
  console.log(
    `targets:  RSS under 1 GiB: ${memoryOk ? 'met' : 'MISSED'}; every box within 5 s: ${answersOk ? 'met' : 'MISSED'}`,
  );
} finally {
  await broker.stop();
}

interface WorkerResult {
  connectMs: number;
  rssMb: number;
  perClientKb: number;
  answered: number;
  publishMs: number;
  lastAnswerMs: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

async function runWorker(args: string[]): Promise<WorkerResult> {
  const child = startTsx(worker, args);
  try {
    const line = await child.line(/^result /);
    return JSON.parse(line.slice('result '.length)) as WorkerResult;
  } finally {
    await child.stop();
  }
}

function argument(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index === -1 ? undefined : process.argv[index + 1];
}
