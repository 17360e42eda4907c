import test from 'ava';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateIssuerKeyPair } from '../../firmware-protocol/index.js';
import { loadProvisioningFile, parseProvisioning, ProvisioningError } from '../../lib/provisioning-file.js';

const example = {
  module_id: 9101,
  parking_id: 7,
  direction: 'entrance',
  mac_address: '00:07:80:aa:bb:01',
  parking_key: '000102030405060708090a0b0c0d0e0f',
  parking_key_next: null,
  box_key: 'f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff',
  skew_seconds: 120,
  min_battery_mv: 3300,
  mqtt: { url: 'mqtt://127.0.0.1:1883', username: 'box-9101', password: 'secret' },
};

test('the example of docs/protocol.md parses into typed fields', (t) => {
  const box = parseProvisioning(example);
  t.is(box.moduleId, 9101);
  t.is(box.direction, 'entrance');
  t.is(box.macAddress, '00:07:80:AA:BB:01');
  t.is(box.parkingKey?.toString('hex'), example.parking_key);
  t.is(box.parkingKeyNext, null);
  t.is(box.boxKey.length, 16);
  t.deepEqual(box.mqtt, example.mqtt);
});

test('skew, minimum battery and mqtt may be left out', (t) => {
  const { skew_seconds: _skew, min_battery_mv: _min, mqtt: _mqtt, ...minimal } = example;
  const box = parseProvisioning(minimal);
  t.is(box.skewSeconds, 120);
  t.is(box.minBatteryMv, 3_300);
  t.is(box.mqtt, null);
});

for (const [field, value, expected] of [
  ['module_id', -1, /module_id: must be an integer/],
  ['module_id', 2 ** 32, /module_id: must be an integer/],
  ['parking_id', '7', /parking_id: must be an integer/],
  ['direction', 'in', /direction: must be "entrance" or "exit"/],
  ['mac_address', '00-07-80-AA-BB-01', /mac_address: must be a MAC address/],
  ['parking_key', 'abc', /parking_key: must be 32 hex digits/],
  ['parking_key_next', 12, /parking_key_next: must be 32 hex digits/],
  ['box_key', null, /box_key: must be 32 hex digits/],
  ['mqtt', { url: 'http://x', username: 'a', password: 'b' }, /mqtt.url: must be an mqtt/],
  ['mqtt', { url: 'mqtt://x', username: '', password: 'b' }, /mqtt.username: must be a non-empty string/],
] as const) {
  test(`a bad ${field} (${JSON.stringify(value)}) is named in the error`, (t) => {
    const error = t.throws(() => parseProvisioning({ ...example, [field]: value }), { instanceOf: ProvisioningError });
    t.regex(error.message, expected);
  });
}

test('fleet files name the element of a bad field', (t) => {
  const error = t.throws(() => parseProvisioning({ ...example, box_key: 'zz' }, '[3]'), {
    instanceOf: ProvisioningError,
  });
  t.is(error.message, '[3].box_key: must be 32 hex digits (a 16-byte key)');
});

test('a missing file and a file that is not JSON are one clear line', async (t) => {
  const directory = await mkdtemp(join(tmpdir(), 'pb-provisioning-'));
  t.teardown(() => rm(directory, { recursive: true, force: true }));
  await t.throwsAsync(loadProvisioningFile(join(directory, 'none.json')), { message: /none\.json: no such file$/ });
  const broken = join(directory, 'broken.json');
  await writeFile(broken, '{"module_id": ');
  await t.throwsAsync(loadProvisioningFile(broken), { message: /broken\.json: not valid JSON/ });
  const array = join(directory, 'array.json');
  await writeFile(array, '[]');
  await t.throwsAsync(loadProvisioningFile(array), { message: 'must be a JSON object' });
});

const issuer = generateIssuerKeyPair().publicKey.toString('hex');
const previous = generateIssuerKeyPair().publicKey.toString('hex');

test("a signed parking's box: parking_key null, issuer_key and issuer_key_previous as docs/protocol.md names them", (t) => {
  const box = parseProvisioning({ ...example, parking_key: null, issuer_key: issuer, issuer_key_previous: previous });
  t.is(box.parkingKey, null);
  t.is(box.issuerKey?.toString('hex'), issuer);
  t.is(box.issuerKeyPrevious?.toString('hex'), previous);
  const sealed = parseProvisioning(example);
  t.is(sealed.issuerKey, null, 'a file of before version 2 holds no issuer key');
  t.is(sealed.issuerKeyPrevious, null);
});

for (const [label, fields, expected] of [
  ['64 hex digits', { issuer_key: 'ab'.repeat(32) }, /^issuer_key: must be 128 hex digits/],
  ['a number', { issuer_key: 12 }, /^issuer_key: must be 128 hex digits/],
  ['zeros', { issuer_key: '00'.repeat(64) }, /^issuer_key: is not a point on P-256$/],
  [
    'off the curve',
    { issuer_key: issuer, issuer_key_previous: `${previous.slice(0, 127)}${previous.endsWith('0') ? '1' : '0'}` },
    /^issuer_key_previous: is not a point on P-256$/,
  ],
  [
    'a previous key alone',
    { issuer_key: null, issuer_key_previous: previous },
    /^issuer_key_previous: must be null when issuer_key is null$/,
  ],
] as const) {
  test(`a bad issuer key (${label}) is one line naming the field`, (t) => {
    const error = t.throws(() => parseProvisioning({ ...example, ...fields }), { instanceOf: ProvisioningError });
    t.regex(error.message, expected);
    t.false(error.message.includes('\n'));
  });
}
