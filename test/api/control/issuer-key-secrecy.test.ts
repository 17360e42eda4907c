// A signed parking end to end, with real parts: the admin CLI (child
// processes) creates it, adds and provisions its boxes (a file, a fleet file,
// a printed file); a simulated box started from its provisioning file (read by
// the simulator's own reader) opens with the service's smart key over MQTT
// through the real API and broker; the phone uploads the same exchange. Then
// the issuer's private key (hex, base64, base64url) is looked for in every
// output: CLI stdout and stderr, provisioning files, API bodies, the OpenAPI
// document and the API's logs at trace level. It must be in none
// (docs/protocol.md, Keys).
import { readFile } from 'node:fs/promises';
import { Writable } from 'node:stream';
import { join } from 'node:path';
import test from 'ava';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import mqtt from 'mqtt';
import { hashIssuedSecret } from '../../../api/auth/secrets.js';
import { appLogger } from '../../../api/app-logger.js';
import { createService } from '../../../api/service.js';
import { configWith } from '../../../api/config/index.js';
import { hashMqttPassword } from '../../../api/auth/mqtt-password.js';
import { MqttAccountRepository } from '../../../api/mqtt/accounts.js';
import { ClientAppRepository } from '../../../api/auth/client-apps-repository.js';
import { FrameKind, parseCommandHeader, parseResponse, Status } from '../../../firmware-protocol/index.js';
import { FakeClock } from '../../../lib/fake-clock.js';
import { Topics } from '../../../lib/mqtt-topics.js';
import { BoxMqttLink } from '../../../simulator/links/mqtt-link.js';
import { loadProvisioningFile } from '../../../lib/provisioning-file.js';
import { loadFleetFile } from '../../../simulator/fleet-file.js';
import { SimulatedBox } from '../../../simulator/simulated-box.js';
import { DRIVER, tempDir, TEST_SCRYPT_LOG2_N } from '../../helpers/api-app.js';
import { runCli, type CliResult } from '../../helpers/run-cli.js';
import { waitFor } from '../../helpers/wait.js';

const topics = new Topics();

test("a signed parking's box opens with the service's smart key, and the issuer private key is in no output", async (t) => {
  let logs = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs += chunk.toString();
      done();
    },
  });
  const dir = tempDir(t, 'parkbench-signed-');
  const databasePath = join(dir, 'signed.sqlite');
  const clock = new FakeClock(Date.now());
  const config = configWith({ databasePath, scryptLog2N: TEST_SCRYPT_LOG2_N });
  const service = await createService(config, {
    clock,
    logger: appLogger({ level: 'trace', stream }),
    mqtt: { mode: 'embedded', host: '127.0.0.1', port: 0 },
  });
  const { app } = service;
  t.teardown(() => service.close());
  await app.ready();
  const brokerUrl = service.mqtt?.url ?? '';

  // The operator's side: the real CLI on the API's database, while it runs.
  const outputs: string[] = [];
  const env = {
    DATABASE_PATH: databasePath,
    SCRYPT_LOG2_N: String(TEST_SCRYPT_LOG2_N),
    MQTT_URL: brokerUrl,
    LOG_LEVEL: 'trace',
  };
  const admin = async (...args: string[]): Promise<CliResult> => {
    const result = await runCli(['admin', ...args], { env });
    outputs.push(result.stdout, result.stderr);
    if (result.code !== 0) throw new Error(`admin ${args.join(' ')}: exit ${result.code}: ${result.stderr}`);
    return result;
  };
  const parking = JSON.parse(
    (
      await admin(
        'parking',
        'create',
        '--name',
        'Signed lot',
        '--currency',
        'EUR',
        '--price-per-hour',
        '2.50',
        '--max-duration-minutes',
        '120',
        '--json',
      )
    ).stdout,
  ) as { id: number; access_mode: string; parking_key: null; issuer_public_key: string };
  t.like(parking, { access_mode: 'signed', parking_key: null });
  await admin(
    'parking',
    'create',
    '--name',
    'Signed lot, text',
    '--currency',
    'EUR',
    '--price-per-hour',
    '1',
    '--max-duration-minutes',
    '60',
  );
  await admin(
    'box',
    'add',
    '--parking',
    String(parking.id),
    '--module-id',
    '9101',
    '--mac',
    '02:50:42:00:23:8D',
    '--direction',
    'entrance',
    '--json',
  );
  await admin(
    'box',
    'add',
    '--parking',
    String(parking.id),
    '--module-id',
    '9102',
    '--mac',
    '02:50:42:00:23:8E',
    '--direction',
    'exit',
  );
  const boxFile = join(dir, 'box-9101.json');
  await admin('box', 'provision', '--module-id', '9101', '--out', boxFile, '--json');
  await admin('box', 'provision', '--module-id', '9102'); // printed
  const fleetFile = join(dir, 'fleet.json');
  await admin('fleet', 'provision', '--parking', String(parking.id), '--count', '2', '--out', fleetFile, '--json');
  const files = [await readFile(boxFile, 'utf8'), await readFile(fleetFile, 'utf8')];

  // The file holds the issuer public key and no parking key, field for field.
  const file = JSON.parse(files[0] ?? '') as Record<string, unknown>;
  t.deepEqual(Object.keys(file), [
    'module_id',
    'parking_id',
    'direction',
    'mac_address',
    'parking_key',
    'parking_key_next',
    'issuer_key',
    'issuer_key_previous',
    'box_key',
    'skew_seconds',
    'min_battery_mv',
    'mqtt',
  ]);
  t.like(file, {
    parking_key: null,
    parking_key_next: null,
    issuer_key: parking.issuer_public_key,
    issuer_key_previous: null,
  });
  const fleet = await loadFleetFile(fleetFile);
  t.deepEqual(
    fleet.map((member) => [member.provisioning.parkingKey, member.provisioning.issuerKey?.toString('hex')]),
    [
      [null, parking.issuer_public_key],
      [null, parking.issuer_public_key],
    ],
  );

  // The simulated box, from its file as the simulator reads it.
  const provisioning = await loadProvisioningFile(boxFile);
  const box = await SimulatedBox.start({ clock, provisioning });
  const mqttLogin = provisioning.mqtt;
  if (mqttLogin === null) return t.fail('the file has no MQTT account');
  const link = new BoxMqttLink(box, {
    url: mqttLogin.url,
    username: mqttLogin.username,
    password: mqttLogin.password,
    clock,
  });
  t.teardown(async () => {
    await link.stop();
    await box.stop();
  });
  await link.start();

  // The driver's side: the API's bodies.
  const bodies: string[] = [];
  const inject = async (options: InjectOptions): Promise<LightMyRequestResponse> => {
    const response = await app.inject(options);
    bodies.push(response.body);
    return response;
  };
  const client = { client_app_id: 'signed-client', client_secret: 'signed-client-secret-0123' };
  await new ClientAppRepository(service.ctx.store).insert(
    'signed',
    client.client_app_id,
    hashIssuedSecret(client.client_secret),
    clock.now(),
  );
  await inject({ method: 'POST', url: '/api/car_driver', payload: { api_car_driver_fo_user: DRIVER, ...client } });
  const token = (
    await inject({
      method: 'POST',
      url: '/api/oauth/token',
      payload: { grant_type: 'password', username: DRIVER.email, password: DRIVER.password, ...client },
    })
  ).json<{ access_token: string }>().access_token;
  const headers = { authorization: `Bearer ${token}` };
  const created = await inject({
    method: 'POST',
    url: '/api/car_driver/parking_sessions',
    headers,
    payload: { parking_session: { secured_parking_id: parking.id } },
  });
  t.is(created.statusCode, 201, created.body);
  const session = created.json<{
    parking_session: { id: number };
    smart_key: { id: number; access_command: string };
  }>();
  const header = parseCommandHeader(Buffer.from(session.smart_key.access_command, 'base64'));
  t.true(
    header.ok && header.header.kind === FrameKind.ACCESS_SIGNED,
    'the smart key of a signed parking is an ACCESS_SIGNED',
  );

  // The phone's stand-in sends it to the box over MQTT; the box answers; the API stores it.
  await new MqttAccountRepository(service.ctx.store).addClient(
    { name: 'phone', role: 'operator', username: 'op-phone', password_hash: hashMqttPassword('op-pw') },
    clock.now(),
  );
  const phone = await mqtt.connectAsync(brokerUrl, { username: 'op-phone', password: 'op-pw', reconnectPeriod: 0 });
  t.teardown(() => phone.endAsync(true));
  const answers: string[] = [];
  phone.on('message', (_topic, payload) => answers.push(payload.toString()));
  await phone.subscribeAsync(topics.box(9101, 'response'), { qos: 1 });
  await phone.publishAsync(topics.box(9101, 'command'), JSON.stringify({ command: session.smart_key.access_command }), {
    qos: 1,
  });
  await waitFor(() => answers.length === 1, "the box's response");
  const answer = JSON.parse(answers[0] ?? '{}') as { command: string; response: string };
  t.is(
    parseResponse(Buffer.from(answer.response, 'base64')).status,
    Status.OK,
    'the box opened with the service smart key',
  );
  await waitFor(() => (service.mqtt?.ingestion.counters.stored ?? 0) === 1, 'the box log stored');
  const log = (await service.ctx.store.kysely
    .selectFrom('box_logs')
    .select(['verified', 'smart_key_id', 'command_decrypted'])
    .executeTakeFirst()) as {
    verified: number;
    smart_key_id: number;
    command_decrypted: string;
  };
  t.like(log, { verified: 1, smart_key_id: session.smart_key.id });
  t.regex(
    log.command_decrypted,
    /^ACCESS_SIGNED key=\d+ parking=\d+ modules=9101,9102,\d+,\d+ valid=\S+ entries=10 exits=10$/,
  );

  // The phone uploads the same exchange (a duplicate), and reads what the driver may read.
  const uploaded = await inject({
    method: 'POST',
    url: '/api/box_logs',
    headers,
    payload: {
      box_logs: [
        {
          box_log: {
            fo_user_id: 1,
            smart_key_id: session.smart_key.id,
            equipment_id: 9101,
            secured_parking_id: parking.id,
            type: 'in',
            command: answer.command,
            command_decrypted: null,
            response: answer.response,
            response_decrypted: null,
            offline: false,
            created_at: '2026-01-01 00:00:00',
            point_attributes: null,
          },
        },
      ],
    },
  });
  t.deepEqual(uploaded.json(), { box_logs: [{ id: 1, verified: true, duplicate: true }] });
  const current = await inject({ method: 'GET', url: '/api/car_driver/parking_sessions/current', headers });
  t.is(current.json<{ parking_session: { state: string } }>().parking_session.state, 'active');
  await inject({ method: 'GET', url: '/api/car_driver/smart_keys', headers });
  await inject({
    method: 'PUT',
    url: `/api/car_driver/parking_sessions/${session.parking_session.id}/finalize`,
    headers,
  });
  await inject({ method: 'GET', url: '/openapi.json' });
  await admin('box', 'status', '--json');
  await admin('demo', '--json'); // a third parking, signed, with its own pair
  await admin('demo');

  // Now look for the private keys (of both parkings) everywhere.
  const privateKeys = (
    await service.ctx.store.kysely.selectFrom('secured_parkings').select('issuer_private_key').orderBy('id').execute()
  ).map((row) => row.issuer_private_key ?? 'none'); // a parking without one fails the regex below
  t.is(privateKeys.length, 3, 'two parkings and the demo one: fleet provision of 2 boxes needed no new parking');
  t.is(app.log.level, 'trace', 'every line the API logs is captured');
  t.true(logs.includes('request completed'), 'the logger did capture requests');
  const places: [string, string][] = [
    ['API logs', logs],
    ['CLI output', outputs.join('\n')],
    ['provisioning files', files.join('\n')],
    ['API bodies', bodies.join('\n')],
  ];
  for (const hex of privateKeys) {
    t.regex(hex, /^[0-9a-f]{64}$/);
    const bytes = Buffer.from(hex, 'hex');
    const forms = [hex, hex.toUpperCase(), bytes.toString('base64'), bytes.toString('base64url')];
    for (const [where, text] of places) {
      for (const form of forms)
        t.false(text.includes(form), `the issuer private key is in the ${where} (${form.slice(0, 8)}…)`);
    }
  }
  t.true(
    outputs.join('\n').includes(parking.issuer_public_key),
    'the public key is shown: the search looks in the right places',
  );
});
