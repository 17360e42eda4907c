import test from 'ava';
import { ConfigError, DEFAULTS, loadConfig } from '../../api/config.js';

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
