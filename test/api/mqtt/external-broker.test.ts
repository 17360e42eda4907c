// Ingestion against a real mosquitto (`MQTT_URL`): mosquitto runs
// with the password and ACL files of `parkbench admin mqtt-acl --format
// mosquitto`, the API is a client of it with its own account (MQTT_USERNAME,
// MQTT_PASSWORD) in a shared subscription group, and a simulated box on
// mosquitto answers a session's access command.
import avaTest, { type ExecutionContext } from 'ava';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { BoxMqttLink } from '../../../simulator/links/mqtt-link.js';
import { parseProvisioning } from '../../../lib/provisioning-file.js';
import { SimulatedBox } from '../../../simulator/simulated-box.js';
import { BoxSerialLink } from '../../../simulator/links/serial-link.js';
import { boxStatuses } from '../../../api/operators/box-status.js';
import { addOperator } from '../../../api/operators/accounts.js';
import { startCli } from '../../helpers/cli-process.js';
import { ptyPairForTest } from '../../helpers/pty-pair.js';
import { tempDir, testApp, type TestApp } from '../../helpers/api-app.js';
import { startMosquitto } from '../../helpers/mosquitto.js';
import {
  addMqttClient,
  boxLogs,
  httpDriver,
  openSession,
  provisioningFile,
  topics,
  watchingOperator,
} from '../../helpers/mqtt-bench.js';
import { seedParking, type SeededParking } from '../../helpers/parking.js';
import { runCli } from '../../helpers/run-cli.js';
import { waitFor } from '../../helpers/wait.js';
import { readCapture } from '../../helpers/pcapng.js';
import { value } from '../../helpers/sql.js';
import { CaptureDirection, RecordKind } from '../../../lib/capture/record.js';
import { onPath, testNeeding } from '../../helpers/requires.js';

// Skipped, with one line naming the package, where mosquitto is not installed (a failure under CI).
const test = testNeeding('mosquitto', avaTest);
// A gateway on a pty pair through mosquitto needs socat as well.
const testWithCable = onPath('mosquitto') ? testNeeding('socat', avaTest) : test;

const API = { username: 'parkbench-api', password: 'api-password-0123' };

interface ExternalBench {
  url: string;
  parking: SeededParking;
  operator: { username: string; password: string };
  gateway: { username: string; password: string };
  /** Starts one more API process stand-in on the same database, a client of mosquitto. */
  api(): Promise<TestApp>;
  /** The box on mosquitto, with its provisioned account. */
  box(clock: TestApp['clock']): Promise<SimulatedBox>;
  /** The entrance box's provisioning (for a box on a cable behind a gateway). */
  provisioning: ReturnType<typeof parseProvisioning>;
}

/** `edit` rewrites the exported ACL file before mosquitto reads it. */
async function externalBench(
  t: ExecutionContext,
  edit: (acl: string) => string = (acl) => acl,
): Promise<ExternalBench> {
  const dir = tempDir(t);
  const seed = await testApp(t, {}, { dir });
  seed.clock.advanceTo(Date.now());
  const parking = await seedParking(seed);
  const { file } = await provisioningFile(seed, parking.entrance.moduleId);
  // Every account needs a hash mosquitto can read, the exit box's too.
  await provisioningFile(seed, parking.exit.moduleId);
  const operator = await addMqttClient(seed, 'operator', 'op-external', 'operator-password');
  const gateway = await addMqttClient(seed, 'gateway', 'gw-external', 'gateway-password');
  const aclDir = join(dir, 'mosquitto');
  const exported = await runCli(['admin', 'mqtt-acl', '--format', 'mosquitto', '--out', aclDir, '--json'], {
    env: { ...seed.databaseEnv, MQTT_USERNAME: API.username, MQTT_PASSWORD: API.password },
  });
  if (exported.code !== 0) throw new Error(exported.stderr);
  const aclFile = join(aclDir, 'acl');
  writeFileSync(aclFile, edit(readFileSync(aclFile, 'utf8')));
  const { url } = await startMosquitto(t, aclDir, operator);
  return {
    url,
    parking,
    operator,
    gateway,
    provisioning: parseProvisioning({ ...file, mqtt: { ...file.mqtt, url } }),
    api: async () => {
      const api = await testApp(t, {}, { dir, mqtt: { mode: 'external', url, ...API, sharedGroup: 'parkbench-api' } });
      api.clock.advanceTo(Date.now());
      return api;
    },
    box: async (clock) => {
      const box = await SimulatedBox.start({
        clock,
        provisioning: parseProvisioning({ ...file, mqtt: { ...file.mqtt, url } }),
      });
      const link = new BoxMqttLink(box, { url, username: file.mqtt.username, password: file.mqtt.password, clock });
      t.teardown(async () => {
        await link.stop();
        await box.stop();
      });
      await link.start();
      return box;
    },
  };
}

/**
 * Garbage on a response topic, sent until every API has counted one more of
 * it (refused, not JSON). The API subscribes when it connects and does not
 * wait for the SUBACK: the first such marker shows each subscription is live
 * (and that mosquitto's ACL let it through). Sent later, it shows that
 * nothing more is coming: mosquitto queues each subscriber's messages in the
 * order it takes them in, and an API ingests and counts them in the order they
 * arrive (each a unit of its group commit, parsed there), so an API that has counted a marker has ingested every
 * message mosquitto routed to it before the marker was published.
 */
async function markerThroughEveryApi(bench: ExternalBench, apis: readonly TestApp[], what: string): Promise<void> {
  const probe = await mqtt.connectAsync(bench.url, { ...bench.gateway, reconnectPeriod: 0 });
  try {
    const refused = (api: TestApp): number => api.mqtt?.ingestion.counters.refused.not_json ?? 0;
    const before = apis.map(refused);
    await waitFor(async () => {
      if (apis.every((api, index) => refused(api) > (before[index] ?? 0))) return true;
      await probe.publishAsync(topics.box(bench.parking.entrance.moduleId, 'response'), 'marker, not json', { qos: 1 });
      return false;
    }, what);
  } finally {
    await probe.endAsync(true);
  }
}

const untilSubscribed = (bench: ExternalBench, apis: readonly TestApp[]): Promise<void> =>
  markerThroughEveryApi(bench, apis, "every API's shared subscription live");

test('through mosquitto: a box answers a session command; the API stores the log verified and the session is active', async (t) => {
  const bench = await externalBench(t);
  const api = await bench.api();
  await untilSubscribed(bench, [api]);
  await bench.box(api.clock);
  const { client: operator, seen } = await watchingOperator(t, bench.url, bench.operator);
  const moduleId = bench.parking.entrance.moduleId;
  await waitFor(
    () =>
      seen.some((message) => message.topic === topics.box(moduleId, 'availability') && message.payload === 'online'),
    'the box online on mosquitto',
  );
  // Its retained state reaches the API through the API's own subscription
  // (its account reads everything in the mosquitto ACL): `live` in the operator API.
  await waitFor(() => api.ctx.liveStates.of(moduleId) !== null, 'the box state through mosquitto');
  t.like(api.ctx.liveStates.of(moduleId), { barrier: 'closed' });

  const driver = await httpDriver(api);
  const session = await openSession(driver, bench.parking.id);
  await operator.publishAsync(topics.box(moduleId, 'command'), JSON.stringify({ command: session.accessCommand }), {
    qos: 1,
  });
  await waitFor(async () => (await boxLogs(api)).length === 1, 'the box log', 10_000);
  t.like((await boxLogs(api))[0], { source: 'mqtt', verified: 1, smart_key_id: session.smartKeyId, type: 'in' });
  t.is((await driver.current()).state, 'active');
  t.is(api.mqtt?.ingestion.counters.stored, 1);

  // The response as the API received it from mosquitto is in the box's capture.
  const { token } = await addOperator(api.ctx.store, 'bench', api.clock.now());
  const capture = await api.app.inject({
    method: 'GET',
    url: `/api/operator/boxes/${moduleId}/capture`,
    headers: { authorization: `Bearer ${token}` },
  });
  t.is(capture.statusCode, 200, capture.body);
  const contents = readCapture(capture.rawPayload);
  t.deepEqual(
    contents.interfaces.map(({ name }) => name),
    [`mqtt:${bench.url}`],
  );
  const stored = await value<string>(api.ctx.store, 'SELECT response FROM box_logs');
  // The markers of untilSubscribed (not JSON, on the box's response topic) come first, messages alone.
  t.deepEqual(
    contents.packets
      .slice(-2)
      .map(({ record }) => [
        record?.direction,
        record?.kind,
        record?.kind === RecordKind.frame ? Buffer.from(record.data).toString('base64') : undefined,
      ]),
    [
      [CaptureDirection.fromBox, RecordKind.message, undefined],
      [CaptureDirection.fromBox, RecordKind.frame, stored],
    ],
  );
});

test('two APIs in one shared group split the responses: each stored once, none twice', async (t) => {
  const bench = await externalBench(t);
  const first = await bench.api();
  const second = await bench.api();
  await untilSubscribed(bench, [first, second]);
  await bench.box(first.clock);
  const { client: operator, seen } = await watchingOperator(t, bench.url, bench.operator);
  const moduleId = bench.parking.entrance.moduleId;
  await waitFor(
    () =>
      seen.some((message) => message.topic === topics.box(moduleId, 'availability') && message.payload === 'online'),
    'the box online on mosquitto',
  );

  const driver = await httpDriver(first);
  const session = await openSession(driver, bench.parking.id);
  // The same key tried again and again: every answer has a box_seq of its own, so each is one verified log.
  const tries = 12;
  for (let index = 0; index < tries; index++)
    await operator.publishAsync(topics.box(moduleId, 'command'), JSON.stringify({ command: session.accessCommand }), {
      qos: 1,
    });
  await waitFor(
    async () => (await boxLogs(first)).filter((log) => log.verified === 1).length === tries,
    `${tries} verified box logs`,
    10_000,
  );
  // Had both APIs received every message, the second copies would be ingested
  // before a marker published now: each API counts one, then nothing more is coming.
  await markerThroughEveryApi(bench, [first, second], 'a marker through each API after the responses');
  const counters = [first, second].map((api) => api.mqtt?.ingestion.counters);
  t.is((await boxLogs(first)).length, tries);
  t.is(new Set((await boxLogs(first)).map((log) => log.box_seq)).size, tries);
  t.is((counters[0]?.stored ?? 0) + (counters[1]?.stored ?? 0), tries);
  t.is((counters[0]?.duplicates ?? 0) + (counters[1]?.duplicates ?? 0), 0, 'no message reached both APIs');
  t.true((counters[0]?.stored ?? 0) > 0 && (counters[1]?.stored ?? 0) > 0, 'mosquitto gave each API a share');
  t.is((await driver.current()).state, 'active');
});

test('through mosquitto: a response on a topic whose module id is not canonical decimal (09101) is counted and dropped, not stored as box 9101', async (t) => {
  const bench = await externalBench(t);
  const api = await bench.api();
  await untilSubscribed(bench, [api]);
  const gateway = await mqtt.connectAsync(bench.url, { ...bench.gateway, reconnectPeriod: 0 });
  t.teardown(() => gateway.endAsync(true));
  const moduleId = bench.parking.entrance.moduleId;
  // A timeout record: it would be stored as an unverified log of the box.
  const message = JSON.stringify({
    command: 'AQE=',
    response: null,
    received_at: new Date().toISOString(),
    via: 'serial',
    context: {},
    error: 'timeout',
  });
  await gateway.publishAsync(`${topics.prefix}/boxes/0${moduleId}/response`, message, { qos: 1 });
  await waitFor(() => (api.mqtt?.ingestion.counters.refused.bad_topic ?? 0) === 1, 'the topic refused');
  t.is((await boxLogs(api)).length, 0);
  await gateway.publishAsync(topics.box(moduleId, 'response'), message, { qos: 1 });
  await waitFor(async () => (await boxLogs(api)).length === 1, 'the same message on the canonical topic stored');
});

testWithCable(
  'through mosquitto: a box behind a gateway killed with SIGKILL is offline with the reason, also for an API that starts afterwards (retained messages only); online once the gateway is back',
  async (t) => {
    const bench = await externalBench(t);
    const api = await bench.api();
    await untilSubscribed(bench, [api]);
    const pair = await ptyPairForTest(t);
    const box = await SimulatedBox.start({ clock: api.clock, provisioning: bench.provisioning });
    const link = new BoxSerialLink(box, { clock: api.clock, target: { path: pair.a, baudRate: 115_200 } });
    t.teardown(async () => {
      await link.stop();
      await box.stop();
    });
    await link.start();
    const queueFile = join(tempDir(t, 'parkbench-gw-'), 'queue.json');
    const gateway = () =>
      startCli(t, [
        'gateway',
        '--mqtt',
        bench.url,
        '--username',
        bench.gateway.username,
        '--password',
        bench.gateway.password,
        '--serial',
        pair.b,
        '--answer-ms',
        '2000',
        '--queue-file',
        queueFile,
        '--log-level',
        'warn',
      ]);
    const moduleId = bench.parking.entrance.moduleId;
    const status = async (of: TestApp) => (await boxStatuses(of.ctx.store, { moduleId }, of.clock.now()))[0];
    const derived = (of: TestApp) => of.mqtt?.availabilityOf(moduleId);

    const first = gateway();
    await waitFor(
      () => derived(api)?.availability === 'online' && derived(api)?.gatewayId === bench.gateway.username,
      'the box online through the gateway',
      20_000,
    );
    await first.stop('SIGKILL');
    await waitFor(
      () => derived(api)?.availability === 'offline',
      'the box offline after its gateway died (last will through mosquitto)',
      10_000,
    );
    t.regex(derived(api)?.reason ?? '', new RegExp(`^gateway ${bench.gateway.username} offline since \\d{4}-`));
    // The database's copy is written after the derived value changes, one write after another.
    await waitFor(
      async () => (await status(api))?.availability === 'offline',
      'the stored availability offline',
      10_000,
    );
    t.like(await status(api), { availability: 'offline', gateway_id: bench.gateway.username });

    // A second API process starts now: it hears only retained messages, in whatever order mosquitto sends them.
    const late = await bench.api();
    await waitFor(
      () => derived(late)?.availability === 'offline',
      'the late API derives offline from the retained messages',
      10_000,
    );
    t.regex(derived(late)?.reason ?? '', new RegExp(`^gateway ${bench.gateway.username} offline since `));

    gateway();
    await waitFor(
      () => derived(api)?.availability === 'online' && derived(late)?.availability === 'online',
      'the box online again in both APIs',
      20_000,
    );
    await waitFor(async () => (await status(api))?.availability === 'online', 'the stored availability online', 10_000);
    t.like(await status(api), { availability: 'online', availability_reason: null });
  },
);

test("through mosquitto: the operator API's sim/set goes out on the API's own account (the exported ACL lets it) and the box applies it", async (t) => {
  const bench = await externalBench(t);
  const api = await bench.api();
  const box = await bench.box(api.clock);
  const { token } = await addOperator(api.ctx.store, 'bench', api.clock.now());
  const moduleId = bench.parking.entrance.moduleId;
  // Sent again until the box's subscription is live (it says nothing when it is).
  await waitFor(async () => {
    if (box.faults.jammed) return true;
    const response = await api.app.inject({
      method: 'POST',
      url: `/api/operator/boxes/${moduleId}/sim`,
      headers: { authorization: `Bearer ${token}` },
      payload: { jam: true },
    });
    t.is(response.statusCode, 202, response.body);
    await new Promise((resolve) => setTimeout(resolve, 100));
    return box.faults.jammed;
  }, 'the box jammed through mosquitto');
  t.deepEqual(box.snapshot().faults, ['jam']);
});

test("through mosquitto: a sim/set the broker's ACL refuses the API is a 502 naming the reason, not a 202", async (t) => {
  // The exported ACL less the API's write on sim/set: mosquitto answers its
  // MQTT 5 publish with PUBACK 0x87 Not authorized.
  const simSetWrite = /^topic write parkbench\/boxes\/\+\/sim\/set\n/m;
  const bench = await externalBench(t, (acl) =>
    acl
      .split('\n\n')
      .map((block) => (block.startsWith(`user ${API.username}\n`) ? `${block}\n`.replace(simSetWrite, '') : block))
      .join('\n\n'),
  );
  // Connected once it is started (createService waits for the first connection).
  const api = await bench.api();
  const { token } = await addOperator(api.ctx.store, 'bench', api.clock.now());
  const moduleId = bench.parking.entrance.moduleId;
  const response = await api.app.inject({
    method: 'POST',
    url: `/api/operator/boxes/${moduleId}/sim`,
    headers: { authorization: `Bearer ${token}` },
    payload: { jam: true },
  });
  t.is(response.statusCode, 502, response.body);
  t.deepEqual(response.json(), {
    error: 'mqtt_publish_refused',
    message: "The MQTT broker refused the publish (its reason code in details): check the API's account in its ACL.",
    details: [
      {
        path: 'topic',
        message: `the broker refused the publish on ${topics.box(moduleId, 'sim/set')}: 0x87 Not authorized`,
      },
    ],
  });
});
