// `parkbench/testing`'s startBench (testing/): the whole bench in the test's
// own process. Its fields work as the ready line's do (a driver's session
// made active by the entrance box through MQTT), benches run side by side,
// stop() stops everything once however often it is called and leaves no
// handle open (a child process that starts and stops one exits by itself),
// each option does what it says, and a bad one is refused by name with
// nothing left running.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import avaTest, { type ExecutionContext } from 'ava';
import { parsePostgresUrl } from '../../api/config/index.js';
import { FrameKind, parseCommandHeader, parseResponse, statusName } from '../../firmware-protocol/index.js';
import { freePort, portIsFree } from '../../lib/free-port.js';
import { BenchOptionError, startBench, type Bench, type BenchOptions } from '../../testing/index.js';
import { tempDir } from '../helpers/api-app.js';
import { boxOf, driverToken, sendToBox, startSession } from '../helpers/bench-driver.js';
import { postgresForFile } from '../helpers/postgres.js';
import { testNeeding } from '../helpers/requires.js';
import { waitFor } from '../helpers/wait.js';

const test = avaTest;
const database = postgresForFile(avaTest);
const fixture = fileURLToPath(new URL('../fixtures/bench-start-stop.ts', import.meta.url));

/** A bench stopped when the test ends. */
async function started(t: ExecutionContext, options: BenchOptions = {}): Promise<Bench> {
  const bench = await startBench(options);
  t.teardown(() => bench.stop());
  return bench;
}

/** The frame kind of a base64 command. */
function kindOf(command: string): number | undefined {
  const parsed = parseCommandHeader(Buffer.from(command, 'base64'));
  return parsed.ok ? parsed.header.kind : undefined;
}

/** The status name of a response message's frame. */
function statusOf(response: string | null): string | undefined {
  return statusName(parseResponse(Buffer.from(response ?? '', 'base64')).status);
}

test("the bench has the ready line's fields, and a driver's session becomes active when the entrance box opens through MQTT", async (t) => {
  const bench = await started(t);
  t.regex(bench.api_url, /^http:\/\/127\.0\.0\.1:\d+$/);
  t.regex(bench.mqtt_url, /^mqtt:\/\/127\.0\.0\.1:\d+$/);
  t.is(bench.docs_url, `${bench.api_url}/docs`);
  t.true(bench.dashboard_url.startsWith(`${bench.api_url}/bench#token=`));
  t.regex(bench.database, /parkbench-testing-[^/]+\/parkbench\.sqlite$/);
  t.is(bench.mqtt_operator.username, 'op-demo-app');
  t.true(bench.token_curl.includes(`${bench.api_url}/api/oauth/token`));
  t.deepEqual(
    bench.boxes.map((box) => [box.direction, box.simulated]),
    [
      ['entrance', true],
      ['exit', true],
    ],
  );
  t.is((await fetch(bench.docs_url)).status, 200);

  const token = await driverToken(bench);
  const session = await startSession(bench, token);
  t.is(session.state, 'entering');
  t.is(kindOf(session.accessCommand), FrameKind.ACCESS_SIGNED);
  const answer = await sendToBox(bench, boxOf(bench, 'entrance'), session.accessCommand);
  t.is(statusOf(answer.response), 'OK');
  const active = await bench.waitForSession(session.id, 'active');
  t.like(active, { id: session.id, state: 'active', parking_id: bench.parking_id, email: bench.driver.email });
  t.deepEqual(active.smart_key_ids, [session.smartKeyId]);
  const current = await fetch(`${bench.api_url}/api/car_driver/parking_sessions/current`, {
    headers: { authorization: `Bearer ${token}` },
  });
  t.is(((await current.json()) as { parking_session: { state: string } }).parking_session.state, 'active');
});

test('two benches side by side: their own ports, databases and boxes', async (t) => {
  const [one, two] = await Promise.all([started(t), started(t)]);
  t.not(one.api_url, two.api_url);
  t.not(one.mqtt_url, two.mqtt_url);
  t.not(one.database, two.database);
  t.not(one.client_app_id, two.client_app_id);
  const sessions = await Promise.all(
    [one, two].map(async (bench) => {
      const session = await startSession(bench, await driverToken(bench));
      await sendToBox(bench, boxOf(bench, 'entrance'), session.accessCommand);
      return bench.waitForSession(session.id, 'active');
    }),
  );
  t.deepEqual(
    sessions.map((session) => session.state),
    ['active', 'active'],
  );
});

test('stop(): the same promise every time; the ports free, the temporary folder gone, the helpers refused', async (t) => {
  const bench = await startBench();
  const folder = dirname(bench.database);
  t.true(existsSync(folder));
  const first = bench.stop();
  t.is(bench.stop(), first);
  await first;
  await bench.stop();
  t.false(existsSync(folder));
  t.true(await portIsFree(Number(new URL(bench.api_url).port)));
  t.true(await portIsFree(Number(new URL(bench.mqtt_url).port)));
  await t.throwsAsync(bench.sim(boxOf(bench, 'entrance'), { jam: true }), {
    message: 'sim(9101): the bench is stopped',
  });
  await t.throwsAsync(bench.waitForSession(1, 'active'), { message: 'waitForSession(1): the bench is stopped' });
});

test('a waitForSession in progress rejects when the bench stops', async (t) => {
  const bench = await startBench();
  const session = await startSession(bench, await driverToken(bench));
  const waiting = bench.waitForSession(session.id, 'active', { timeoutMs: 60_000 });
  await bench.stop();
  await t.throwsAsync(waiting, { message: `waitForSession(${session.id}, 'active'): the bench stopped` });
});

/** Runs test/fixtures/bench-start-stop.ts with `options`, its TMPDIR a
 * folder of the test's; resolves with its line and how long after that line
 * it exited, once it has. */
async function startStopProcess(
  t: ExecutionContext,
  options: Record<string, unknown>,
): Promise<{ line: string; exitedAfterMs: number; code: number | null; tmp: string }> {
  const tmp = tempDir(t, 'pb-bench-process-');
  const child = spawn(process.execPath, ['--import', 'tsx', fixture, JSON.stringify(options)], {
    env: { ...process.env, TMPDIR: tmp },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let output = '';
  let lineAt = 0;
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
    if (lineAt === 0 && output.includes('\n')) lineAt = performance.now();
  });
  let exitAt = 0;
  child.once('exit', () => (exitAt = performance.now()));
  // 'close', not 'exit': its output may still be on its way when it has exited.
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  // The line read after the exit (a loaded machine): it exited at once.
  return { line: output.trim(), exitedAfterMs: Math.max(0, exitAt - lineAt), code, tmp };
}

/** The temporary data folders of benches in `tmp` (tsx keeps its cache there too). */
function benchFolders(tmp: string): string[] {
  return readdirSync(tmp).filter((name) => name.startsWith('parkbench-testing-'));
}

/** What "promptly" means for a process with nothing left to do; the machine is shared and loaded. */
const PROMPT_EXIT_MS = 3_000;

test('a process that starts and stops a bench exits by itself, promptly, its temporary folder gone', async (t) => {
  const run = await startStopProcess(t, {});
  t.is(run.line, 'stopped');
  t.is(run.code, 0);
  t.log(`exited ${Math.round(run.exitedAfterMs)} ms after stop()`);
  t.true(run.exitedAfterMs < PROMPT_EXIT_MS, `exited ${Math.round(run.exitedAfterMs)} ms after stop()`);
  t.deepEqual(benchFolders(run.tmp), []);
});

/** A TCP server holding a free port until the test ends. */
async function portTaken(t: ExecutionContext): Promise<number> {
  const port = await freePort();
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return port;
}

for (const [what, options, message] of [
  [
    'an HTTP port in use',
    async (t: ExecutionContext) => ({ port: await portTaken(t) }),
    /^rejected: startBench: port: HTTP port \d+ on 127\.0\.0\.1 is already in use \(give another port, or none for a free one\)$/,
  ],
  [
    'an MQTT port in use',
    async (t: ExecutionContext) => ({ mqttPort: await portTaken(t) }),
    /^rejected: startBench: mqttPort: cannot start the bench: MQTT port \d+ on 127\.0\.0\.1 is already in use \(give another mqttPort, or none for a free one\)$/,
  ],
  [
    'an unreachable PostgreSQL URL',
    async () => ({ databaseUrl: `postgres://parkbench@127.0.0.1:${await freePort()}/parkbench` }),
    /^rejected: startBench: databaseUrl: cannot start the bench: .*ECONNREFUSED/,
  ],
] as const) {
  test(`${what}: rejected naming the option, and nothing left running (its process exits by itself)`, async (t) => {
    const run = await startStopProcess(t, await options(t));
    t.regex(run.line, message);
    t.is(run.code, 0);
    t.true(run.exitedAfterMs < PROMPT_EXIT_MS, `exited ${Math.round(run.exitedAfterMs)} ms after the rejection`);
    t.deepEqual(benchFolders(run.tmp), [], 'the temporary data folder removed');
  });
}

for (const [options, option, message] of [
  [{ port: -1 }, 'port', 'startBench: port must be an integer from 0 to 65535 (0: a free one), got -1'],
  [{ port: 70_000 }, 'port', 'startBench: port must be an integer from 0 to 65535 (0: a free one), got 70000'],
  [{ port: '3000' }, 'port', 'startBench: port must be an integer from 0 to 65535 (0: a free one), got "3000"'],
  [{ mqttPort: 1.5 }, 'mqttPort', 'startBench: mqttPort must be an integer from 0 to 65535 (0: a free one), got 1.5'],
  [{ accessMode: 'open' }, 'accessMode', 'startBench: accessMode must be signed or sealed, got "open"'],
  [{ speed: 0 }, 'speed', 'startBench: speed must be a number above 0 and at most 10000, got 0'],
  [{ dataDir: ' ' }, 'dataDir', `startBench: dataDir must be a folder's path, got " "`],
  [
    { databaseUrl: 'mysql://db/parkbench' },
    'databaseUrl',
    /^startBench: databaseUrl must use postgres: or postgresql:/,
  ],
  [{ logLevel: 'loud' }, 'logLevel', /^startBench: logLevel must be one of fatal, .*, got "loud"$/],
  [{ prot: 3000 }, 'prot', /^startBench: prot is no option \(they are port, mqttPort, dataDir, speed, accessMode, /],
] as const) {
  test(`a bad option is refused by name before anything starts: ${JSON.stringify(options)}`, async (t) => {
    const error = await t.throwsAsync(startBench(options as BenchOptions), { instanceOf: BenchOptionError, message });
    t.is(error.option, option);
  });
}

test('options: the ports and the data folder given, kept after stop() and taken up again with the same demo data', async (t) => {
  const [port, mqttPort] = [await freePort(), await freePort()];
  const dataDir = join(tempDir(t, 'pb-bench-data-'), 'data');
  const bench = await started(t, { port, mqttPort, dataDir });
  t.is(bench.api_url, `http://127.0.0.1:${port}`);
  t.is(bench.mqtt_url, `mqtt://127.0.0.1:${mqttPort}`);
  t.is(bench.database, join(dataDir, 'parkbench.sqlite'));
  await bench.stop();
  t.true(existsSync(bench.database), 'the data folder given is kept');
  const again = await started(t, { dataDir });
  t.is(again.client_app_id, bench.client_app_id);
  t.deepEqual(again.driver, bench.driver);
  t.not(again.api_url, bench.api_url, 'a free port when none is given');
});

test("the speed option: the boxes' clocks run that many times faster", async (t) => {
  const bench = await started(t, { speed: 100 });
  const entrance = boxOf(bench, 'entrance');
  // An empty sim/set changes nothing: its answer is the box's state.
  const boxTime = async () => Date.parse((await bench.sim(entrance, {})).box_time);
  const first = await boxTime();
  // At speed 1 this would take 20 s.
  await waitFor(async () => (await boxTime()) - first >= 20_000, "20 s of the box's time", 5_000);
  t.pass();
});

test('accessMode sealed: an ACCESS under the parking key that the box opens for; a data folder of the other mode is refused', async (t) => {
  const dataDir = tempDir(t, 'pb-bench-sealed-');
  const bench = await started(t, { accessMode: 'sealed', dataDir });
  const session = await startSession(bench, await driverToken(bench));
  t.is(kindOf(session.accessCommand), FrameKind.ACCESS);
  t.is(statusOf((await sendToBox(bench, boxOf(bench, 'entrance'), session.accessCommand)).response), 'OK');
  t.is((await bench.waitForSession(session.id, 'active')).state, 'active');
  await bench.stop();

  const error = await t.throwsAsync(startBench({ dataDir, accessMode: 'signed' }), {
    instanceOf: BenchOptionError,
    message:
      'startBench: accessMode: the demo parking of this database is sealed, not signed: start on another database for a signed one',
  });
  t.is(error.option, 'accessMode');
  t.is((await started(t, { dataDir })).client_app_id, bench.client_app_id, 'without accessMode, as it is');
});

testNeeding('postgres', test)('databaseUrl: the bench on PostgreSQL', async (t) => {
  const { url } = database();
  const bench = await started(t, { databaseUrl: url });
  t.is(bench.database, parsePostgresUrl(url).shown);
  const session = await startSession(bench, await driverToken(bench));
  await sendToBox(bench, boxOf(bench, 'entrance'), session.accessCommand);
  t.is((await bench.waitForSession(session.id, 'active')).state, 'active');
});

test('sim: a jammed entrance box refuses the smart key until the jam is cleared; a bad field or box is refused by name', async (t) => {
  const bench = await started(t);
  const entrance = boxOf(bench, 'entrance');
  const jammed = await bench.sim(entrance, { jam: true });
  t.deepEqual(jammed.faults, ['jam']);
  const session = await startSession(bench, await driverToken(bench));
  t.is(statusOf((await sendToBox(bench, entrance, session.accessCommand)).response), 'BARRIER_FAULT');
  t.deepEqual((await bench.sim(entrance, { jam: false })).faults, []);
  t.is(statusOf((await sendToBox(bench, entrance, session.accessCommand)).response), 'OK');
  t.is((await bench.waitForSession(session.id, 'active')).state, 'active');

  await t.throwsAsync(bench.sim(entrance, { jam: 'yes' } as never), {
    message: `sim(${entrance}): jam: must be true or false`,
  });
  await t.throwsAsync(bench.sim(entrance, { jamm: true } as never), {
    message: new RegExp(`^sim\\(${entrance}\\): jamm: unknown setting`),
  });
  await t.throwsAsync(bench.sim(4242, { jam: true }), {
    message: 'sim(4242): no simulated box 4242 on this bench (its boxes: 9101, 9102)',
  });
});

test('waitForSession: a state not reached in time, no such session, and no such state are refused with what is wrong', async (t) => {
  const bench = await started(t);
  const session = await startSession(bench, await driverToken(bench));
  await t.throwsAsync(bench.waitForSession(session.id, 'active', { timeoutMs: 50 }), {
    message: `waitForSession(${session.id}): the session is still entering, not active, after 50 ms`,
  });
  await t.throwsAsync(bench.waitForSession(999, 'active'), {
    message: 'waitForSession(999): there is no parking session 999',
  });
  await t.throwsAsync(bench.waitForSession(session.id, 'activ' as never), {
    message: `waitForSession(${session.id}): state must be one of entering, active, exiting, finished, got "activ"`,
  });
});
