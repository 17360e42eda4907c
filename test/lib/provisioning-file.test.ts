// Which keys go into a box's provisioning file (lib/provisioning-file.ts), for
// every state a parking's keys can be in; and the writer's output is what the
// reader of the same module (the simulator's) takes.
import test from 'ava';
import { generateIssuerKeyPair } from '../../firmware-protocol/index.js';
import {
  fileKeysOf,
  parseProvisioning,
  provisioningFile,
  type ParkingKeysForFile,
} from '../../lib/provisioning-file.js';

const publicKey = (): string => generateIssuerKeyPair().publicKey.toString('hex');
const K_PARK = '000102030405060708090a0b0c0d0e0f';
const K_PARK_NEXT = '101112131415161718191a1b1c1d1e1f';
const [CURRENT, PREVIOUS, NEXT] = [publicKey(), publicKey(), publicKey()];

const parking = (fields: Partial<ParkingKeysForFile>): ParkingKeysForFile => ({
  access_mode: 'signed',
  parking_key: null,
  parking_key_next: null,
  issuer_public_key: null,
  issuer_previous_public_key: null,
  issuer_next_public_key: null,
  ...fields,
});

const cases: [string, Partial<ParkingKeysForFile>, ReturnType<typeof fileKeysOf>][] = [
  [
    'signed, one pair',
    { issuer_public_key: CURRENT },
    { parking_key: null, parking_key_next: null, issuer_key: CURRENT, issuer_key_previous: null },
  ],
  [
    'signed, after a rotation',
    { issuer_public_key: CURRENT, issuer_previous_public_key: PREVIOUS },
    { parking_key: null, parking_key_next: null, issuer_key: CURRENT, issuer_key_previous: PREVIOUS },
  ],
  [
    'signed, a next pair being installed',
    { issuer_public_key: CURRENT, issuer_previous_public_key: PREVIOUS, issuer_next_public_key: NEXT },
    { parking_key: null, parking_key_next: null, issuer_key: NEXT, issuer_key_previous: CURRENT },
  ],
  [
    'signed, moved from sealed: K_park stays home',
    { parking_key: K_PARK, parking_key_next: K_PARK_NEXT, issuer_public_key: CURRENT },
    { parking_key: null, parking_key_next: null, issuer_key: CURRENT, issuer_key_previous: null },
  ],
  [
    'sealed',
    { access_mode: 'sealed', parking_key: K_PARK },
    { parking_key: K_PARK, parking_key_next: null, issuer_key: null, issuer_key_previous: null },
  ],
  [
    'sealed, K_park being rotated',
    { access_mode: 'sealed', parking_key: K_PARK, parking_key_next: K_PARK_NEXT },
    { parking_key: K_PARK, parking_key_next: K_PARK_NEXT, issuer_key: null, issuer_key_previous: null },
  ],
  [
    'sealed, moving to signed (issuer pair being installed)',
    { access_mode: 'sealed', parking_key: K_PARK, issuer_next_public_key: NEXT },
    { parking_key: K_PARK, parking_key_next: null, issuer_key: NEXT, issuer_key_previous: null },
  ],
];

for (const [name, fields, expected] of cases) {
  test(`file keys: ${name}`, (t) => {
    t.deepEqual(fileKeysOf(parking(fields)), expected);
  });
}

test('the file the service writes is the file the simulator reads, field for field', (t) => {
  const box = {
    module_id: 9101,
    parking_id: 7,
    direction: 'entrance' as const,
    mac_address: '00:07:80:AA:BB:01',
    box_key: '202122232425262728292a2b2c2d2e2f',
    skew_seconds: 90,
    min_battery_mv: 3_400,
  };
  const file = provisioningFile(box, parking({ issuer_public_key: CURRENT, issuer_next_public_key: NEXT }), {
    url: 'mqtt://127.0.0.1:1883',
    username: 'box-9101',
    password: 'pw',
  });
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
  const read = parseProvisioning(JSON.parse(JSON.stringify(file)));
  t.like(read, {
    moduleId: 9101,
    parkingId: 7,
    parkingKey: null,
    parkingKeyNext: null,
    skewSeconds: 90,
    minBatteryMv: 3_400,
  });
  t.is(read.issuerKey?.toString('hex'), NEXT);
  t.is(read.issuerKeyPrevious?.toString('hex'), CURRENT);
});

test('one home: conformance/ and simulator/ read the provisioning file from lib/, neither from the other nor api/', async (t) => {
  const { readdirSync, readFileSync } = await import('node:fs');
  const root = new URL('../../', import.meta.url);
  const found: string[] = [];
  for (const [folder, banned] of [
    ['conformance', /from '[./]*(simulator|api)\//],
    ['simulator', /from '[./]*(conformance|api)\//],
  ] as const) {
    for (const name of readdirSync(new URL(`${folder}/`, root), { recursive: true, encoding: 'utf8' })) {
      if (!name.endsWith('.ts')) continue;
      if (banned.test(readFileSync(new URL(`${folder}/${name}`, root), 'utf8'))) found.push(`${folder}/${name}`);
    }
  }
  t.deepEqual(found, []);
  const module = await import('../../lib/provisioning-file.js');
  t.is(typeof module.loadProvisioningFile, 'function', 'the reader is in lib/provisioning-file.ts');
});
