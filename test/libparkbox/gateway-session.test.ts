// A whole parking session through the gateway against libparkbox: the API
// with its embedded broker, `parkbench gateway --serial A --serial B` as a
// child process, and parkbox-host as the entrance and the exit box of one
// parking, each on its own socat pty pair with its own state file and the
// provisioning file the database gives it. `parkbench app` plays the
// driver's phone (register, start a session, send the smart key to the
// entrance, upload the box log, pay in the sandbox, the same at the exit),
// as test/e2e/start-and-app.test.ts has it play against simulated boxes.
// Each response reaches the API twice, from the gateway over MQTT and from
// the app's upload: both box logs are stored once each, and verified (their
// tags checked by the API under the box's key).
//
// Needs socat, cmake, a C compiler and mbed TLS's headers (libmbedtls-dev),
// through testNeeding: without one, a skip naming the package; under CI, a
// failure.
import avaTest from 'ava';
import { join } from 'node:path';
import { freePort } from '../../lib/free-port.js';
import { DRIVER, testApp } from '../helpers/api-app.js';
import { startCli } from '../helpers/cli-process.js';
import { addMqttClient, provisioningFile, topics, watchingOperator } from '../helpers/mqtt-bench.js';
import { ACCESS_MODES, seedParking } from '../helpers/parking.js';
import { buildParkboxHost, startParkboxHost } from '../helpers/parkbox-host.js';
import { ptyPairForTest } from '../helpers/pty-pair.js';
import { testNeeding } from '../helpers/requires.js';
import { runCli } from '../helpers/run-cli.js';
import { all } from '../helpers/sql.js';
import { waitFor } from '../helpers/wait.js';

const test = testNeeding(['socat', 'cmake', 'cc', 'mbedtls'], avaTest.serial);

for (const accessMode of ACCESS_MODES) {
  test(`a driver's session through parkbench gateway, parkbox-host as the entrance and exit boxes of a ${accessMode} parking: entering -> active -> finished, both box logs verified, stored once`, async (t) => {
    t.timeout(120_000);
    await buildParkboxHost();
    // The sandbox's payment page is on the API's own port, known before the app is made.
    const port = await freePort();
    const app = await testApp(
      t,
      { publicUrl: `http://127.0.0.1:${port}` },
      { mqtt: { mode: 'embedded', host: '127.0.0.1', port: 0 } },
    );
    // The API's clock reads real time, as the boxes' clocks do.
    app.clock.advanceTo(Date.now());
    const parking = await seedParking(app, { accessMode });
    const url = app.mqtt?.url ?? '';

    // The boxes: parkbox-host on one end of each cable, with the file `admin box provision` gives.
    const links: string[] = [];
    for (const box of [parking.entrance, parking.exit]) {
      const { path } = await provisioningFile(app, box.moduleId);
      const pair = await ptyPairForTest(t);
      await startParkboxHost(t, path, pair.a, join(app.dir, `box-${box.moduleId}.state`));
      links.push(pair.b);
    }

    // The gateway on the other ends, with an account of its own.
    const gatewayAccount = await addMqttClient(app, 'gateway', 'gw-libparkbox', 'gateway-password');
    const gateway = startCli(t, [
      'gateway',
      ...['--mqtt', url, '--username', gatewayAccount.username, '--password', gatewayAccount.password],
      ...links.flatMap((link) => ['--serial', link]),
      ...['--queue-file', join(app.dir, 'gateway-queue.json'), '--log-level', 'warn'],
    ]);
    await gateway.waitForLine(/^parkbench gateway ready /);
    const operator = await addMqttClient(app, 'operator', 'op-libparkbox', 'operator-password');
    const { seen } = await watchingOperator(t, url, operator);
    for (const box of [parking.entrance, parking.exit])
      await waitFor(
        () =>
          seen.some(
            (message) => message.topic === topics.box(box.moduleId, 'availability') && message.payload === 'online',
          ),
        `box ${box.moduleId} online through the gateway`,
        15_000,
      );

    // The driver's phone.
    const base = await app.app.listen({ host: '127.0.0.1', port });
    const result = await runCli([
      'app',
      ...['--server', base, '--mqtt', url],
      ...['--mqtt-username', operator.username, '--mqtt-password', operator.password],
      ...['--client-app-id', app.client.client_app_id, '--client-secret', app.client.client_secret],
      ...['--email', DRIVER.email, '--password', DRIVER.password, '--register'],
      ...['--parking', String(parking.id)],
    ]);
    t.is(result.code, 0, `${result.stdout}\n${result.stderr}`);
    for (const step of [
      'register',
      'start a parking session',
      `entrance: send the smart key to box ${parking.entrance.moduleId}`,
      'entrance: upload the box log',
      'session active',
      'pay in the sandbox',
      `exit: send the smart key to box ${parking.exit.moduleId}`,
      'exit: upload the box log',
      'session finished',
    ])
      t.true(result.stdout.includes(step), `the output shows "${step}"`);
    // The gateway delivered each response before the app uploaded it.
    t.is(result.stdout.split('stored once').length - 1, 2, result.stdout);

    // The session's story, from the database: both box logs verified, stored once each.
    const logs = await all<{ verified: number; type: string; equipment_id: number; command_decrypted: string }>(
      app.ctx.store,
      'SELECT verified, type, equipment_id, command_decrypted FROM box_logs ORDER BY id',
    );
    t.deepEqual(
      logs.map(({ verified, type, equipment_id }) => ({ verified, type, equipment_id })),
      [
        { verified: 1, type: 'in', equipment_id: parking.entrance.moduleId },
        { verified: 1, type: 'out', equipment_id: parking.exit.moduleId },
      ],
    );
    const kind = accessMode === 'signed' ? 'ACCESS_SIGNED' : 'ACCESS';
    for (const log of logs) t.regex(log.command_decrypted, new RegExp(`^${kind} key=\\d+ parking=\\d+ modules=`));
    t.is(await gateway.stop('SIGTERM'), 0);
  });
}
