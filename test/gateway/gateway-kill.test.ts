// A gateway killed with SIGKILL while commands stream through it loses no
// box response silently. Real parts: the API (embedded aedes broker, its
// store), a `parkbench gateway` process on one end of a socat pty pair and
// `parkbench sim` (one box) on the other, an operator
// streaming ACCESS commands, and SIGKILLs at random points of the stream
// (seeded: the seed is in the log and in every failure message;
// PARKBENCH_TEST_SEED=n replays the same kill points).
//
// What a gateway cannot do: a box's answer lives on the cable, then in the
// gateway's memory until the write that holds it is flushed; the box
// protocol has no retransmission, and a serial port's open discards what
// waits on it. So a kill while the box answers, or inside that flush, can
// lose one answer. What it must do: never lose one silently. A command is
// on disk before it goes on the cable; at its next start the gateway
// publishes the answer if it comes then, or a timeout record for it. So at
// the end every response the box sent (its own count, `parkbench sim
// stopped`) is a verified box log exactly once, or its command has a
// timeout record and no log, at most one a kill.
//
// Two rounds put the kill where a response was lost, deterministically and
// with no hook in the product: the box is stopped (SIGSTOP) while the
// gateway writes it a command, the gateway is killed, and the box goes on
// (SIGCONT)
// 1. once the gateway runs again: its answer must be stored (a gateway
//    that kept nothing of its commands drops it as unmatched);
// 2. while no gateway runs: that answer is gone, and its command must be
//    reported (a gateway that kept nothing publishes nothing).
// Then random rounds: the stream runs, the gateway is killed at a random
// point of it, and started again.
import avaTest from 'ava';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { FrameKind, sealCommand } from '../../firmware-protocol/index.js';
import { readQueueFile } from '../../gateway/disk-queue.js';
import { tempDir } from '../helpers/api-app.js';
import { startCli, type CliProcess } from '../helpers/cli-process.js';
import { addMqttClient, benchApp, provisioningFile, topics, type BenchApp } from '../helpers/mqtt-bench.js';
import { ptyPairForTest } from '../helpers/pty-pair.js';
import { testNeeding } from '../helpers/requires.js';
import { all } from '../helpers/sql.js';
import { waitFor } from '../helpers/wait.js';

// Skipped, with one line naming the package, where socat is not installed (a failure under CI).
const test = testNeeding('socat', avaTest);

/** Rounds of stream-and-kill after the two deterministic ones. */
const RANDOM_ROUNDS = 5;
/** How long a random round streams before its kill, ms: from 0 to this. */
const MAX_STREAM_MS = 600;
/** The gateway's --answer-ms. */
const ANSWER_MS = 3_000;

/** A small seeded generator (mulberry32): the same seed, the same kill points. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** Lets another process work for a while (never to prove that something did not happen). */
const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface ResponseRecord {
  command: string;
  response: string | null;
  error?: string;
}

test('SIGKILL of the gateway at random points of a command stream: every response the box sent is stored once, or its command reported', async (t) => {
  t.timeout(240_000);
  const seed = Number(process.env.PARKBENCH_TEST_SEED ?? Math.floor(Math.random() * 2 ** 31));
  const next = random(seed);
  t.log(`seed ${seed} (PARKBENCH_TEST_SEED=${seed} replays these kill points)`);

  const app = await benchApp(t);
  const url = app.mqtt?.url ?? '';
  const box = app.parking.entrance;
  const parkingKey = app.parking.parkingKey;
  if (parkingKey === null) throw new Error('benchApp seeds a sealed parking');
  const pair = await ptyPairForTest(t);
  const { path: boxFile } = await provisioningFile(app, box.moduleId);
  const sim = startCli(t, ['sim', '--box', boxFile, '--serial', pair.a, '--memory-state', '--log-level', 'warn']);
  await sim.waitForLine(/^parkbench sim ready /);

  const gatewayAccount = await addMqttClient(app, 'gateway', 'gw-kill', 'gateway-password');
  const queueFile = join(tempDir(t, 'parkbench-gw-kill-'), 'queue.json');
  const startGateway = async (): Promise<CliProcess> => {
    const gateway = startCli(t, [
      'gateway',
      '--mqtt',
      url,
      '--username',
      gatewayAccount.username,
      '--password',
      gatewayAccount.password,
      '--serial',
      pair.b,
      '--answer-ms',
      String(ANSWER_MS),
      '--queue-file',
      queueFile,
      '--log-level',
      'warn',
    ]);
    await gateway.waitForLine(/^parkbench gateway ready /);
    return gateway;
  };
  /** Nothing waits in the gateway's queue file: no command unanswered, no record the broker did not take. */
  const queueEmpty = async (): Promise<boolean> => {
    const content = await readQueueFile(queueFile);
    return content.publishes.length === 0 && content.commands.length === 0;
  };

  // The operator: publishes the commands, sees every record the gateway publishes.
  const operator = await mqtt.connectAsync(url, {
    ...(await addMqttClient(app, 'operator', 'op-kill', 'operator-password')),
    reconnectPeriod: 0,
  });
  t.teardown(() => operator.endAsync(true));
  const records: ResponseRecord[] = [];
  operator.on('message', (_topic, payload) => records.push(JSON.parse(payload.toString()) as ResponseRecord));
  await operator.subscribeAsync(topics.box(box.moduleId, 'response'), { qos: 1 });

  const now = Math.floor(Date.now() / 1000);
  let sent = 0;
  /** Publishes the next command: an ACCESS of a key of its own (no key runs out of tries). */
  const publishCommand = async (): Promise<string> => {
    const index = sent++;
    const command = sealCommand({
      kind: FrameKind.ACCESS,
      key: parkingKey,
      keyId: 0x7000_0000 + index,
      scope: app.parking.id,
      body: { notBefore: now - 60, notAfter: now + 3_600, maxEntries: 9, maxExits: 9, moduleIds: [box.moduleId] },
    }).toString('base64');
    await operator.publishAsync(topics.box(box.moduleId, 'command'), JSON.stringify({ command }), { qos: 1 });
    return command;
  };
  const answered = (command: string): boolean =>
    records.some((record) => record.command === command && record.response !== null);
  const reported = (command: string): boolean =>
    records.some((record) => record.command === command && record.error === 'timeout');
  /** Publishes commands until one is answered: the gateway is up, subscribed and relaying. */
  const untilRelaying = async (answerWithinMs = 1_000): Promise<void> => {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const command = await publishCommand();
      const relayed = await waitFor(() => answered(command), 'a command answered', answerWithinMs).then(
        () => true,
        () => false,
      );
      if (relayed) return;
      if (Date.now() > deadline) throw new Error(`seed ${seed}: the gateway never relayed a command`);
    }
  };
  let kills = 0;
  /** The box stopped, a command published: time for the gateway to take it
   * and write it to the cable, then the kill. */
  const killWithCommandOnCable = async (): Promise<string> => {
    sim.child.kill('SIGSTOP');
    const command = await publishCommand();
    await pause(500);
    t.is(await gateway.stop('SIGKILL'), 'SIGKILL');
    kills++;
    return command;
  };

  // Round 1: the box answers once the gateway runs again.
  let gateway = await startGateway();
  await untilRelaying();
  const late = await killWithCommandOnCable();
  gateway = await startGateway();
  sim.child.kill('SIGCONT');
  await waitFor(() => answered(late), `seed ${seed}: the late answer published`, 10_000).catch(() => undefined);
  t.true(answered(late), `seed ${seed}: the answer that came after the restart is published`);
  await untilRelaying();

  // Round 2: the box answers while no gateway runs.
  const whileDown = await killWithCommandOnCable();
  sim.child.kill('SIGCONT');
  await pause(300); // the box answers into the cable, whose other end no process holds
  gateway = await startGateway();
  await untilRelaying();

  // Random rounds.
  for (let round = 3; round < 3 + RANDOM_ROUNDS; round++) {
    const streaming = { on: true };
    const stream = (async () => {
      while (streaming.on) {
        await publishCommand();
        await pause(Math.floor(next() * 4));
      }
    })();
    await pause(Math.floor(next() * MAX_STREAM_MS));
    t.is(await gateway.stop('SIGKILL'), 'SIGKILL', `seed ${seed}, round ${round}`);
    kills++;
    streaming.on = false;
    await stream;
    gateway = await startGateway();
    await untilRelaying();
  }

  // The end: every command before the last one done, every kept command of
  // earlier runs answered or reported; then what the box sent against what is stored.
  const last = await publishCommand();
  await waitFor(() => answered(last), `seed ${seed}: the last command answered`, 20_000);
  await waitFor(
    queueEmpty,
    `seed ${seed}: every command answered or reported, every record taken`,
    ANSWER_MS + 10_000,
  ).catch(() => undefined);
  await gateway.stop('SIGTERM');
  await sim.stop('SIGTERM');
  const { commandsAnswered: boxAnswered } = JSON.parse(
    (await sim.waitForLine(/^parkbench sim stopped /)).replace(/^parkbench sim stopped /, ''),
  ) as { commandsAnswered: number };

  const stored = await verifiedLogs(app, box.moduleId);
  const storedCommands = new Set(stored.map((log) => log.command));
  const boxSeqs = new Set(stored.map((log) => log.box_seq));
  const lost = boxAnswered - stored.length;
  const reportedLost = new Set(
    records.filter((record) => record.error === 'timeout' && !storedCommands.has(record.command)).map((r) => r.command),
  ).size;
  const what = `seed ${seed}: the box answered ${boxAnswered} of ${sent} commands; ${stored.length} verified box logs (${boxSeqs.size} box_seq); ${reportedLost} commands reported unanswered and not stored; ${kills} kills`;
  t.log(what);
  t.is(boxSeqs.size, stored.length, `each response stored once: ${what}`);
  t.true(
    storedCommands.has(whileDown) || reported(whileDown),
    `the answer sent while no gateway ran is reported: ${what}`,
  );
  t.true(lost >= 0, what);
  t.true(lost <= reportedLost && lost <= kills, `every lost response reported, at most one a kill: ${what}`);
});

async function verifiedLogs(app: BenchApp, moduleId: number): Promise<{ command: string; box_seq: number }[]> {
  return await all<{ command: string; box_seq: number }>(
    app.ctx.store,
    'SELECT command, box_seq FROM box_logs WHERE equipment_id = ? AND verified = 1 ORDER BY id',
    moduleId,
  );
}
