// npm run perf:serial [-- --count 300]
//
// Command -> response round trip through the whole serial bench: an MQTT
// command message, the gateway, a socat pty pair standing in for the USB
// cable at 115200 baud, a simulated box, and back to an MQTT response
// message. Measured against, in the same run:
//   - the wire's floor: the link frames' bytes × 10 bits / baud, the time a
//     real 115200-baud cable needs for the bytes alone;
//   - a bare round trip on the same pty (a raw echo), what the pty itself costs.
// A pty does not emulate the baud rate, so what this measures
// is the software's own time; on a real cable the round trip is about the
// floor plus that. Target: p50 within 5 ms of the floor.
// The gateway runs twice: with its publish queue on disk, as `parkbench
// gateway` runs it (each command and each response written and flushed to
// disk before it goes on), and with the queue in memory, what the disk costs.
// Then what `--capture` costs: two benches up at once, queue in memory, one
// recording both ends to pcapng files (the box's side with its opened
// records, as `parkbench sim --capture`; the gateway's, as `parkbench gateway
// --capture`), the other not, taking turns in blocks of ten rounds. Target:
// p50 with the capture within 0.2 ms of without. Beside it, the process's
// CPU time per round trip with and without: on a loaded machine the p50s
// move with the load, the CPU time much less.
import { randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { SerialPort } from 'serialport';
import { systemClock } from '../lib/clock.js';
import { LinkFrameParser } from '../lib/link-frame-stream.js';
import { Topics } from '../lib/mqtt-topics.js';
import { disableNagle } from '../lib/resilient-mqtt.js';
import { encodeLinkFrame, FrameKind, LinkType, parseResponse, sealCommand } from '../firmware-protocol/index.js';
import { SimulatedBox } from '../simulator/simulated-box.js';
import { defaultBatteryModel } from '../simulator/battery.js';
import { BoxSerialLink } from '../simulator/links/serial-link.js';
import { DiskPublishQueue } from '../gateway/disk-queue.js';
import { Gateway } from '../gateway/gateway.js';
import { startPtyPair } from '../testkit/pty-pair.js';
import { CaptureFile } from '../lib/capture/capture-file.js';
import { LinkCapture } from '../lib/capture/link-capture.js';
import { BoxCapture, SIM_CAPTURE_DESCRIPTION } from '../simulator/links/box-capture.js';
import { formatNumber, percentile, startTsx } from './support/processes.js';

const BAUD = 115_200;
const count = Number(argument('--count') ?? 300);
/** Rounds taken in turn by the bench recording and the one not: blocks of
 * them, so that the CPU time a block measures (the whole process: box,
 * gateway, operator) is its own but for the block's last round's tail. */
const BLOCK_ROUNDS = 10;
const topics = new Topics();
const parkingKey = randomBytes(16);
const moduleId = 9001;
const now = Math.floor(Date.now() / 1000);

function access(keyId: number, module = moduleId): Buffer {
  return sealCommand({
    kind: FrameKind.ACCESS,
    key: parkingKey,
    keyId,
    scope: 7,
    body: {
      notBefore: now - 60,
      notAfter: now + 86_400,
      maxEntries: 255,
      maxExits: 255,
      moduleIds: [module, module + 1],
    },
  });
}

const sampleCommand = access(1);
const commandFrameBytes = encodeLinkFrame(LinkType.COMMAND, sampleCommand).length;
const responseFrameBytes = encodeLinkFrame(LinkType.RESPONSE, Buffer.alloc(32, 1)).length;
const floorMs = ((commandFrameBytes + responseFrameBytes) * 10 * 1000) / BAUD;

console.log(
  `serial benchmark: ${count} round trips at ${BAUD} baud; ACCESS link frame ${commandFrameBytes} B, response ${responseFrameBytes} B`,
);
console.log(
  `wire floor: ${formatNumber(floorMs, 2)} ms ((${commandFrameBytes} + ${responseFrameBytes}) bytes × 10 bits / ${BAUD} baud)`,
);

const bare = await bareEcho(count);
const full = await throughGateway(count, 'disk');
const inMemory = await throughGateway(count, 'memory');
const capture = await captureOnAndOff(count);
const overheadP50 = full.p50;
console.log('');
console.log(`bare pty echo:         p50 ${formatNumber(bare.p50, 2)} ms, p99 ${formatNumber(bare.p99, 2)} ms`);
console.log(
  `MQTT->gateway->pty->box->MQTT: p50 ${formatNumber(full.p50, 2)} ms, p99 ${formatNumber(full.p99, 2)} ms (${formatNumber(full.p50 / bare.p50, 1)}x the bare pty; queue on disk, as parkbench gateway)`,
);
console.log(
  `the same, queue in memory:     p50 ${formatNumber(inMemory.p50, 2)} ms, p99 ${formatNumber(inMemory.p99, 2)} ms (the disk costs ${formatNumber(full.p50 - inMemory.p50, 2)} ms at p50)`,
);
const captureCost = capture.on.p50 - capture.off.p50;
console.log(
  `--capture on both ends:        p50 ${formatNumber(capture.on.p50, 2)} ms, p99 ${formatNumber(capture.on.p99, 2)} ms; off, taking turns: p50 ${formatNumber(capture.off.p50, 2)} ms, p99 ${formatNumber(capture.off.p99, 2)} ms (queue in memory; ${capture.packets} packets, ${formatNumber(capture.bytes / 1024, 0)} KiB recorded)`,
);
console.log(
  `--capture CPU per round trip:  ${formatNumber(capture.on.cpuMicros, 0)} µs on, ${formatNumber(capture.off.cpuMicros, 0)} µs off (+${formatNumber(capture.on.cpuMicros - capture.off.cpuMicros, 0)} µs, ratio ${formatNumber(capture.on.cpuMicros / capture.off.cpuMicros, 2)}; the box, the gateway and the operator, all in this process)`,
);
console.log(
  `target: --capture within 0.2 ms of off at p50: ${captureCost <= 0.2 ? 'met' : 'MISSED'} (${captureCost >= 0 ? '+' : ''}${formatNumber(captureCost, 3)} ms)`,
);
console.log(`on a real ${BAUD}-baud cable: about ${formatNumber(floorMs + full.p50, 2)} ms p50 (floor + software)`);
console.log(
  `target: p50 within 5 ms of the floor: ${overheadP50 <= 5 ? 'met' : 'MISSED'} (software time ${formatNumber(overheadP50, 2)} ms over the floor)`,
);
process.exit(0);

/** A raw echo on the pty: what the cable stand-in costs by itself. */
async function bareEcho(rounds: number): Promise<{ p50: number; p99: number }> {
  const pair = await startPtyPair();
  const a = await openPort(pair.a);
  const b = await openPort(pair.b);
  a.on('data', (chunk: Buffer) => a.write(chunk));
  const parser = b.pipe(new LinkFrameParser());
  const frame = encodeLinkFrame(LinkType.COMMAND, sampleCommand);
  const times: number[] = [];
  for (let index = 0; index < rounds + 20; index++) {
    const started = performance.now();
    const echoed = new Promise<void>((resolve) => parser.once('data', () => resolve()));
    b.write(frame);
    await echoed;
    if (index >= 20) times.push(performance.now() - started);
  }
  await Promise.all([closePort(a), closePort(b)]);
  await pair.close();
  return summary(times);
}

async function throughGateway(rounds: number, queueOn: 'disk' | 'memory'): Promise<{ p50: number; p99: number }> {
  const broker = startTsx(new URL('./support/broker.ts', import.meta.url));
  const folder = await mkdtemp(join(tmpdir(), 'pb-bench-queue-'));
  try {
    const url = await brokerUrl(broker);
    const bench = await serialBench(url, {
      module: moduleId,
      queueFile: queueOn === 'disk' ? join(folder, 'queue.json') : undefined,
    });
    const times: number[] = [];
    try {
      for (let index = 0; index < rounds + 20; index++) {
        const time = await bench.round(100 + index);
        if (index >= 20) times.push(time);
      }
    } finally {
      await bench.stop();
    }
    return summary(times);
  } finally {
    await broker.stop();
    await rm(folder, { recursive: true, force: true });
  }
}

interface CaptureSide {
  readonly p50: number;
  readonly p99: number;
  /** Process CPU time per round trip, µs. */
  readonly cpuMicros: number;
}

/** The round trip with both ends recording and without, in blocks taking
 * turns (which goes first alternates too). */
async function captureOnAndOff(
  rounds: number,
): Promise<{ on: CaptureSide; off: CaptureSide; packets: number; bytes: number }> {
  const broker = startTsx(new URL('./support/broker.ts', import.meta.url));
  const folder = await mkdtemp(join(tmpdir(), 'pb-bench-capture-'));
  try {
    const url = await brokerUrl(broker);
    const off = await serialBench(url, { module: moduleId + 10 });
    const on = await serialBench(url, { module: moduleId + 20, captureIn: folder });
    const times = { on: [] as number[], off: [] as number[] };
    const cpuMicros = { on: 0, off: 0 };
    try {
      for (let block = 0; block < (rounds + 20) / BLOCK_ROUNDS; block++) {
        const order = block % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const);
        for (const which of order) {
          const bench = which === 'on' ? on : off;
          const cpuBefore = process.cpuUsage();
          for (let round = 0; round < BLOCK_ROUNDS; round++) {
            const index = block * BLOCK_ROUNDS + round;
            const time = await bench.round(100 + index);
            if (index >= 20) times[which].push(time);
          }
          const cpu = process.cpuUsage(cpuBefore);
          if (block * BLOCK_ROUNDS >= 20) cpuMicros[which] += cpu.user + cpu.system;
        }
      }
    } finally {
      await Promise.all([on.stop(), off.stop()]);
    }
    const files = on.captures;
    return {
      on: { ...summary(times.on), cpuMicros: cpuMicros.on / times.on.length },
      off: { ...summary(times.off), cpuMicros: cpuMicros.off / times.off.length },
      packets: files.reduce((sum, file) => sum + file.packets, 0),
      bytes: files.reduce((sum, file) => sum + file.bytes, 0),
    };
  } finally {
    await broker.stop();
    await rm(folder, { recursive: true, force: true });
  }
}

async function brokerUrl(broker: ReturnType<typeof startTsx>): Promise<string> {
  return `mqtt://127.0.0.1:${String((await broker.line(/^listening \d+$/, 30_000)).split(' ')[1])}`;
}

interface SerialBench {
  /** One command through it (an ACCESS of key `keyId`): the round trip, ms. */
  round(keyId: number): Promise<number>;
  /** Its capture files once stopped (none without `captureIn`). */
  readonly captures: { packets: number; bytes: number }[];
  stop(): Promise<void>;
}

/** A box on a pty pair, a gateway, an operator: one command at a time. With
 * `queueFile` the gateway's queue is on disk; with `captureIn` the box's end
 * and the gateway record to files there. */
async function serialBench(
  url: string,
  options: { module: number; queueFile?: string | undefined; captureIn?: string },
): Promise<SerialBench> {
  const { module } = options;
  const pair = await startPtyPair();
  const box = await SimulatedBox.start({
    clock: systemClock,
    provisioning: {
      moduleId: module,
      parkingId: 7,
      direction: 'entrance',
      macAddress: '02:00:00:00:23:29',
      parkingKey,
      parkingKeyNext: null,
      boxKey: randomBytes(16),
      skewSeconds: 120,
      minBatteryMv: 3_300,
      mqtt: null,
    },
    barrierTimings: { openingMs: 0, openHoldMs: 0, closingMs: 0 },
    // 2 mV an opening would reach min_battery_mv at round 300 (LOW_BATTERY):
    // this bench measures the link, not the battery.
    batteryModel: { ...defaultBatteryModel, movementDrainMv: 0 },
  });
  const captureFile = (name: string): CaptureFile | undefined =>
    options.captureIn === undefined
      ? undefined
      : new CaptureFile({ path: join(options.captureIn, name), application: `parkbench perf:serial ${name}` });
  const simFile = captureFile('sim.pcapng');
  const gatewayFile = captureFile('gateway.pcapng');
  const link = new BoxSerialLink(box, {
    clock: systemClock,
    target: { path: pair.a, baudRate: BAUD },
    ...(simFile === undefined
      ? {}
      : {
          capture: new BoxCapture(
            new LinkCapture(simFile, 'serial', pair.a, { description: SIM_CAPTURE_DESCRIPTION }),
            box,
          ),
        }),
  });
  await link.start();
  const gateway = new Gateway({
    mqtt: { url, username: `gw-bench-${module}`, password: 'x' },
    topics,
    clock: systemClock,
    serial: [{ path: pair.b, baudRate: BAUD }],
    answerTimeoutMs: 5_000,
    ...(options.queueFile === undefined ? {} : { queue: await DiskPublishQueue.open(options.queueFile) }),
    ...(gatewayFile === undefined ? {} : { capture: gatewayFile }),
  });
  await gateway.start();
  while (!gateway.boxes.some((entry) => entry.moduleId === module))
    await new Promise((resolve) => setTimeout(resolve, 10));
  const operator = await mqtt.connectAsync(url);
  disableNagle(operator);
  await operator.subscribeAsync(topics.box(module, 'response'), { qos: 1 });
  const captures: { packets: number; bytes: number }[] = [];
  return {
    captures,
    round: async (keyId) => {
      const command = access(keyId, module).toString('base64');
      const started = performance.now();
      const answered = new Promise<void>((resolve) => {
        const onMessage = (_topic: string, payload: Buffer): void => {
          const message = JSON.parse(payload.toString()) as { command: string; response: string | null };
          if (message.command !== command) return;
          operator.off('message', onMessage);
          if (message.response === null || parseResponse(Buffer.from(message.response, 'base64')).status !== 0)
            throw new Error('the box did not open');
          resolve();
        };
        operator.on('message', onMessage);
      });
      await operator.publishAsync(topics.box(module, 'command'), JSON.stringify({ command }), { qos: 1 });
      await answered;
      return performance.now() - started;
    },
    stop: async () => {
      await operator.endAsync(true);
      await gateway.stop();
      await link.stop();
      await box.stop();
      await pair.close();
      for (const file of [simFile, gatewayFile]) {
        if (file === undefined) continue;
        file.close();
        if (file.stopped !== undefined) throw new Error(`the capture stopped: ${file.stopped.message}`);
        captures.push({ packets: file.packets, bytes: file.files.reduce((sum, path) => sum + statSync(path).size, 0) });
      }
    },
  };
}

function summary(times: number[]): { p50: number; p99: number } {
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 0.5), p99: percentile(times, 0.99) };
}

async function openPort(path: string): Promise<SerialPort> {
  const port = new SerialPort({ path, baudRate: BAUD, autoOpen: false });
  await new Promise<void>((resolve, reject) => port.open((error) => (error ? reject(error) : resolve())));
  return port;
}

function closePort(port: SerialPort): Promise<void> {
  return new Promise((resolve) => port.close(() => resolve()));
}

function argument(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index === -1 ? undefined : process.argv[index + 1];
}
