import test from 'ava';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { ConfigError, databaseShown, DEFAULTS, loadConfig } from '../../../api/config/index.js';
import { configFrom, mqttConnectionOf } from '../../../cli/commands/api.js';

test('defaults, frozen, with PUBLIC_URL derived from HOST and PORT', (t) => {
  const config = loadConfig({});
  t.like(config, {
    host: '127.0.0.1',
    port: 3000,
    publicUrl: 'http://127.0.0.1:3000',
    databasePath: './data/parkbench.sqlite',
    databaseBusyTimeoutMs: 5000,
    tokenTtlSeconds: 7200,
    bodyLimitBytes: 1_048_576,
    mqttUrl: undefined,
  });
  t.true(Object.isFrozen(config));
  t.true(Object.isFrozen(DEFAULTS));
});

test('flags win over the environment', (t) => {
  const config = loadConfig({ PORT: '4000', HOST: '0.0.0.0', TOKEN_TTL_SECONDS: '60' }, { PORT: '5000' });
  t.is(config.port, 5000);
  t.is(config.publicUrl, 'http://0.0.0.0:5000');
  t.is(config.tokenTtlSeconds, 60);
  t.is(loadConfig({ PUBLIC_URL: 'https://park.example/' }).publicUrl, 'https://park.example');
  t.is(loadConfig({ TRUST_PROXY: 'true' }).trustProxy, true);
});

test('bad values name the variable or the flag', (t) => {
  t.throws(() => loadConfig({ PORT: '3000x' }), { instanceOf: ConfigError, message: /^PORT must be an integer/ });
  t.throws(() => loadConfig({}, { PORT: '-5' }), { instanceOf: ConfigError, message: /^--port must be an integer/ });
  t.throws(() => loadConfig({ TRUST_PROXY: 'maybe' }), { message: /^TRUST_PROXY must be true or false/ });
  t.throws(() => loadConfig({ SCRYPT_LOG2_N: '30' }), { message: /^SCRYPT_LOG2_N/ });
  t.throws(() => loadConfig({ DATABASE_PATH: '  ' }), { message: /^DATABASE_PATH must not be empty/ });
  t.throws(() => loadConfig({ DATABASE_BUSY_TIMEOUT_MS: '-1' }), {
    message: /^DATABASE_BUSY_TIMEOUT_MS must be an integer/,
  });
});

test('MQTT_MAX_PACKET_BYTES: 64 KiB by default, from 4 KiB to the 256 MiB MQTT can express', (t) => {
  t.is(loadConfig({}).mqttMaxPacketBytes, 65_536);
  t.is(loadConfig({ MQTT_MAX_PACKET_BYTES: '268435455' }).mqttMaxPacketBytes, 268_435_455);
  t.throws(() => loadConfig({ MQTT_MAX_PACKET_BYTES: '4095' }), {
    message: /^MQTT_MAX_PACKET_BYTES must be an integer from 4096 to 268435455/,
  });
  t.throws(() => loadConfig({ MQTT_MAX_PACKET_BYTES: '268435456' }), {
    message: /^MQTT_MAX_PACKET_BYTES must be an integer/,
  });
});

test('HTTP timeouts: defaults, and checked against each other and the waits a request makes', (t) => {
  t.like(loadConfig({}), {
    httpRequestTimeoutMs: 30_000,
    httpHeadersTimeoutMs: 10_000,
    httpConnectionTimeoutMs: 10_000,
    httpKeepAliveTimeoutMs: 72_000,
  });
  t.throws(() => loadConfig({ HTTP_REQUEST_TIMEOUT_MS: '0' }), {
    message: /^HTTP_REQUEST_TIMEOUT_MS must be an integer from 100/,
  });
  t.throws(() => loadConfig({ HTTP_HEADERS_TIMEOUT_MS: '40000' }), {
    message: /^HTTP_HEADERS_TIMEOUT_MS \(40000\) must not exceed HTTP_REQUEST_TIMEOUT_MS/,
  });
  t.throws(() => loadConfig({ BOX_ANSWER_TIMEOUT_MS: '10000' }), {
    message: /^HTTP_CONNECTION_TIMEOUT_MS \(10000\) must be greater than BOX_ANSWER_TIMEOUT_MS/,
  });
  t.throws(() => loadConfig({}, { HTTP_CONNECTION_TIMEOUT_MS: '5000' }), {
    message: /^--http-connection-timeout-ms \(5000\) must be greater than BOX_ANSWER_TIMEOUT_MS/,
  });
});

test('DATABASE_URL: postgres:// or postgresql:// parsed into its parts, unset by default', (t) => {
  t.is(loadConfig({}).databaseUrl, undefined);
  t.is(loadConfig({ DATABASE_URL: '  ' }).databaseUrl, undefined);
  t.deepEqual(loadConfig({ DATABASE_URL: 'postgres://park:s%40cret@db.example:6543/parkbench' }).databaseUrl, {
    host: 'db.example',
    port: 6543,
    database: 'parkbench',
    user: 'park',
    password: 's@cret',
    ssl: 'disable',
    shown: 'postgres://park:***@db.example:6543/parkbench',
  });
  t.like(loadConfig({}, { DATABASE_URL: 'postgresql://[::1]/bench?sslmode=verify-full' }).databaseUrl, {
    host: '::1',
    port: 5432,
    database: 'bench',
    user: undefined,
    password: undefined,
    ssl: 'verify-full',
  });
  t.true(Object.isFrozen(loadConfig({ DATABASE_URL: 'postgres://h/d' }).databaseUrl));
});

test('a bad DATABASE_URL names the variable or the flag, and never shows the password', (t) => {
  for (const [url, message] of [
    ['mysql://park:hunter2@db/parkbench', /must use postgres: or postgresql:/],
    ['park:hunter2@db/parkbench', /must use postgres: or postgresql:|must be a URL/],
    ['postgres://park:hunter2@db', /must name one database/],
    ['postgres://park:hunter2@db/a/b', /must name one database/],
    ['postgres://park:hunter2@db:99999/parkbench', /must be a URL/],
    ['postgres://park:hunter2@db/parkbench?sslmode=prefer', /sslmode must be one of disable, require, verify-full/],
    ['postgres://park:hunter2@db/parkbench?application_name=x', /takes no parameter but sslmode/],
    ['postgres://park:hunter2@db/%E0%A4%A', /badly percent-encoded/],
  ] as const) {
    const error = t.throws(() => loadConfig({ DATABASE_URL: url }), {
      instanceOf: ConfigError,
      message: /^DATABASE_URL/,
    });
    t.regex(error.message, message, url);
    t.false(error.message.includes('hunter2'), error.message);
  }
  t.throws(() => loadConfig({}, { DATABASE_URL: 'http://db/x' }), { message: /^--database-url must use postgres:/ });
});

test('an external broker: a client id a restarted process takes again, and a session kept an hour', (t) => {
  const external = { MQTT_URL: 'mqtt://broker.example:1883', PORT: '3001' };
  t.like(mqttConnectionOf(loadConfig(external)), {
    mode: 'external',
    clientId: `parkbench-api-${hostname().replace(/[^A-Za-z0-9.-]/g, '-')}-3001`,
    sessionExpirySeconds: 3600,
  });
  t.like(mqttConnectionOf(loadConfig({ ...external, MQTT_CLIENT_ID: 'api-a', MQTT_SESSION_EXPIRY_SECONDS: '0' })), {
    clientId: 'api-a',
    sessionExpirySeconds: 0,
  });
  t.throws(() => loadConfig({ MQTT_CLIENT_ID: 'api a' }), { message: /^MQTT_CLIENT_ID must be empty or 1 to 128/ });
  t.throws(() => loadConfig({ MQTT_CLIENT_ID: '$share' }), { message: /^MQTT_CLIENT_ID must be/ });
  t.throws(() => loadConfig({ MQTT_SESSION_EXPIRY_SECONDS: '-1' }), {
    message: /^MQTT_SESSION_EXPIRY_SECONDS must be an integer/,
  });
});

test('one database rule for every command: a database flag, then DATABASE_URL, then DATABASE_PATH, then the default', (t) => {
  const url = 'postgres://park:hunter2@db.example/parkbench';
  const where = (
    env: Record<string, string>,
    flags: Record<string, string> = {},
    commandDefaults: Record<string, string> = {},
  ): string => databaseShown(configFrom(flags, env, commandDefaults));
  const file = (path: string): string => resolve(path);
  t.is(where({}), file('./data/parkbench.sqlite'), 'the default');
  t.is(
    where({}, {}, { DATABASE_PATH: 'bench/parkbench.sqlite' }),
    file('bench/parkbench.sqlite'),
    "a command's default",
  );
  t.is(
    where({ DATABASE_PATH: 'env.sqlite' }, {}, { DATABASE_PATH: 'bench/parkbench.sqlite' }),
    file('env.sqlite'),
    "DATABASE_PATH over a command's default",
  );
  t.is(where({ DATABASE_PATH: 'env.sqlite', DATABASE_URL: url }), 'postgres://park:***@db.example/parkbench');
  t.is(where({ DATABASE_URL: url }, { database: 'flag.sqlite' }), file('flag.sqlite'), 'a file flag over DATABASE_URL');
  t.is(where({ DATABASE_URL: url }, { databasePath: 'flag.sqlite' }), file('flag.sqlite'), 'so is --database-path');
  t.is(where({ DATABASE_PATH: 'env.sqlite' }, { database: url }), 'postgres://park:***@db.example/parkbench');
  t.is(where({}, { database: 'flag.sqlite', databaseUrl: url }), 'postgres://park:***@db.example/parkbench');
});
