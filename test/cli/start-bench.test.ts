// `parkbench start`'s bench (cli/start/bench.ts), in process: a failure of
// the whole bench becomes the CLI's one line, naming the setting as the CLI
// sets it, and its exit code: 1 for a port in use, 2 for a database
// parkbench must not use.
import { createServer } from 'node:net';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import Database from 'better-sqlite3';
import { configWith } from '../../api/config/index.js';
import { CliError } from '../../cli/errors.js';
import { startCliBench } from '../../cli/start/bench.js';
import { freePort } from '../../lib/free-port.js';
import { silentLogger } from '../../lib/logger.js';
import { tempDir } from '../helpers/api-app.js';

/** A TCP server holding a free port until the test ends. */
async function portTaken(t: ExecutionContext): Promise<number> {
  const port = await freePort();
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return port;
}

async function cliStart(t: ExecutionContext, ports: { port: number; mqttPort: number }, databasePath?: string) {
  const dataDir = tempDir(t, 'pb-cli-start-');
  const config = configWith({
    host: '127.0.0.1',
    ...ports,
    databasePath: databasePath ?? join(dataDir, 'parkbench.sqlite'),
  });
  const bench = await startCliBench({
    config,
    mqtt: { mode: 'embedded', host: config.host, port: config.mqttPort },
    dataDir,
    fresh: false,
    speed: 1,
    apiLogger: false,
    simLogger: silentLogger,
    version: 'test',
  });
  t.teardown(() => bench.stop());
  return bench;
}

test('an HTTP port in use: its line names PORT and --port, exit 1', async (t) => {
  const port = await portTaken(t);
  const error = await t.throwsAsync(cliStart(t, { port, mqttPort: 0 }), { instanceOf: CliError });
  t.is(error.message, `HTTP port ${port} on 127.0.0.1 is already in use (set PORT or --port)`);
  t.is(error.exitCode, 1);
});

test("the embedded broker's port in use: its line names MQTT_PORT and MQTT_URL, exit 1", async (t) => {
  const mqttPort = await portTaken(t);
  const error = await t.throwsAsync(cliStart(t, { port: await freePort(), mqttPort }), { instanceOf: CliError });
  t.is(
    error.message,
    `cannot start the bench: MQTT port ${mqttPort} on 127.0.0.1 is already in use (set MQTT_PORT, or MQTT_URL for an external broker)`,
  );
  t.is(error.exitCode, 1);
});

test("another program's SQLite file: refused in one line, exit 2", async (t) => {
  const foreign = join(tempDir(t, 'pb-cli-start-'), 'shop.sqlite');
  const shop = new Database(foreign);
  shop.exec('CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)');
  shop.close();
  const error = await t.throwsAsync(cliStart(t, { port: await freePort(), mqttPort: 0 }, foreign), {
    instanceOf: CliError,
  });
  t.regex(error.message, /^cannot start the bench: .*shop\.sqlite.*not a parkbench database/);
  t.is(error.exitCode, 2);
});
