// npm run perf:capture-ring [-- --boxes 5000 --seconds 300 --mb 64]
//
// The API's capture ring (api/capture/) fed as the MQTT side feeds it, with
// no broker: each of --boxes boxes sends one response message a second for
// --seconds seconds of the ring's clock (a message as the simulator
// publishes it: an ACCESS_SIGNED command, its 32-byte response, received_at,
// via, a context), recorded through MqttCapture (the message, then the
// frame of the message as ingestion parsed it; the parse is ingestion's,
// not counted here). Twice in the same run: within CAPTURE_RING_MB
// (--mb, the default 64), then with a bound large enough to hold it all (what
// the whole window would take). Prints the bytes held against the bound, the
// process's heap and external memory after a GC against a baseline taken
// before the ring, the time a message costs to record, and how much of the
// window the bound keeps.
import { randomBytes, randomUUID } from 'node:crypto';
import { CaptureRing, MqttCapture } from '../api/capture/index.js';
import { parseResponseMessage, type ReceivedResponseMessage } from '../lib/mqtt-messages.js';
import { formatNumber } from './support/processes.js';

const boxes = Number(argument('--boxes') ?? 5_000);
const seconds = Number(argument('--seconds') ?? 300);
const boundMb = Number(argument('--mb') ?? 64);
const MB = 1024 * 1024;
const START_MICROS = Date.UTC(2026, 0, 1) * 1000;

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc (npm run perf:capture-ring does)');

console.log(
  `capture ring: ${formatNumber(boxes)} boxes x 1 response message a second x ${seconds} s (${formatNumber(boxes * seconds)} messages), 2-core machine`,
);
const bounded = await run(boundMb * MB);
const whole = await run(4096 * MB);
console.log(
  `window:   all ${seconds} s of ${formatNumber(boxes)} boxes would take ${formatNumber(whole.held / MB, 1)} MiB of slabs (${formatNumber(whole.held / (boxes * seconds))} bytes a message); ${boundMb} MiB keeps the last ${formatNumber(bounded.keptSeconds, 1)} s of them, or ${seconds} s of ${formatNumber((boundMb * MB) / (whole.held / boxes))} boxes`,
);

interface Figures {
  held: number;
  keptSeconds: number;
}

/** A full collection, then another once the freed buffers' memory is given back. */
async function collected(): Promise<NodeJS.MemoryUsage> {
  gc?.();
  await new Promise((resolve) => setImmediate(resolve));
  gc?.();
  return process.memoryUsage();
}

async function run(maxBytes: number): Promise<Figures> {
  let now = START_MICROS;
  const ring = new CaptureRing({ maxAgeMicros: seconds * 1_000_000, maxBytes, nowMicros: () => now });
  const capture = new MqttCapture(ring, 'mqtt://127.0.0.1:1883');
  // Parsed beforehand: the API's ingestion parses each message once, for itself and the ring.
  const messages = Array.from({ length: 16 }, () => {
    const payload = responseMessage();
    return { payload, parsed: parseResponseMessage(payload) };
  });
  const topics = Array.from({ length: boxes + 1 }, (_, moduleId) => `parkbench/boxes/${moduleId}/response`);
  const before = await collected();
  const started = process.hrtime.bigint();
  const step = Math.floor(1_000_000 / boxes);
  for (let second = 0; second < seconds; second++) {
    for (let moduleId = 1; moduleId <= boxes; moduleId++) {
      const message = messages[moduleId % 16] as { payload: Buffer; parsed: ReceivedResponseMessage };
      capture.response(moduleId, topics[moduleId] as string, message.payload, message.parsed);
      now += step;
    }
  }
  const nsPerMessage = Number(process.hrtime.bigint() - started) / (boxes * seconds);
  const after = await collected();
  const oldest = readCapture(ring, boxes);
  const keptSeconds = (now - oldest) / 1_000_000;
  const heapMb = (after.heapUsed - before.heapUsed) / MB;
  const externalMb = (after.arrayBuffers - before.arrayBuffers) / MB;
  const rssMb = (after.rss - before.rss) / MB;
  console.log(
    `bound ${formatNumber(maxBytes / MB)} MiB: ${formatNumber(ring.heldBytes / MB, 1)} MiB of slabs held (${formatNumber(ring.heldBytes / maxBytes, 2)} of the bound), ${formatNumber(ring.records)} records, the last ${formatNumber(keptSeconds, 1)} s; after a GC, against before the ring: heap ${signed(heapMb)} MiB, array buffers ${signed(externalMb)} MiB (${formatNumber((externalMb * MB) / maxBytes, 2)} of the bound), RSS ${signed(rssMb)} MiB; ${formatNumber(nsPerMessage / 1000, 2)} µs to record a message`,
  );
  return { held: ring.heldBytes, keptSeconds };
}

/** The oldest record the ring still serves of a box's (microseconds), read through its pcapng. */
function readCapture(ring: CaptureRing, moduleId: number): number {
  const file = ring.capture(moduleId, 'parkbench perf api');
  // The first Enhanced Packet Block after the section and interface blocks: its timestamp.
  let at = 0;
  while (at < file.length) {
    const type = file.readUInt32LE(at);
    if (type === 6) return file.readUInt32LE(at + 12) * 2 ** 32 + file.readUInt32LE(at + 16);
    at += file.readUInt32LE(at + 4);
  }
  return Number.NaN;
}

/** A response message as a box publishes it (lib/mqtt-messages.ts, ResponseMessage). */
function responseMessage(): Buffer {
  return Buffer.from(
    JSON.stringify({
      command: randomBytes(101).toString('base64'),
      response: randomBytes(32).toString('base64'),
      received_at: new Date(START_MICROS / 1000).toISOString(),
      via: 'mqtt',
      context: { request_id: randomUUID(), fo_user_id: 1042, smart_key_id: 70_311 },
    }),
  );
}

function signed(value: number): string {
  return `${value >= 0 ? '+' : '-'}${formatNumber(Math.abs(value), 1)}`;
}

function argument(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index === -1 ? undefined : process.argv[index + 1];
}
