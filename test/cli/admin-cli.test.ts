// `parkbench admin` through the real entry point, on a temporary DATABASE_PATH.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/api-app.js';
import { MqttAccountRepository } from '../../api/mqtt/accounts.js';

function admin(t: ExecutionContext) {
  const dir = tempDir(t, 'parkbench-admin-');
  const env = { DATABASE_PATH: join(dir, 'data', 'admin.sqlite'), SCRYPT_LOG2_N: '10', MQTT_URL: '' };
  const run = (...args: string[]) => runCli(['admin', ...args], { env });
  const json = async <T>(...args: string[]): Promise<T> => {
    const result = await run(...args, '--json');
    if (result.code !== 0) throw new Error(`exit ${result.code}: ${result.stderr}`);
    return JSON.parse(result.stdout) as T;
  };
  return { dir, env, run, json };
}

const keys = (value: object) => Object.keys(value);

test('client-app create --json prints id, name, client_app_id, client_secret (URL-safe)', async (t) => {
  const cli = admin(t);
  const created = await cli.json<Record<string, string>>('client-app', 'create', '--name', 'Phone app');
  t.deepEqual(keys(created), ['id', 'name', 'client_app_id', 'client_secret']);
  t.regex(created.client_secret ?? '', /^[A-Za-z0-9_-]{43}$/);
  const human = await cli.run('client-app', 'create', '--name', 'Other');
  t.is(human.code, 0);
  t.regex(human.stdout, /client_secret: /);
});

test('parking create --json, with validation of every flag (exit 2, one line)', async (t) => {
  const cli = admin(t);
  const parking = await cli.json<Record<string, unknown>>(
    'parking',
    'create',
    '--name',
    'Lot',
    '--currency',
    'EUR',
    '--price-per-hour',
    '2.5',
    '--max-duration-minutes',
    '120',
    '--online',
    '--description',
    'by the station',
  );
  t.deepEqual(keys(parking), [
    'id',
    'name',
    'currency',
    'price_per_hour',
    'max_duration_minutes',
    'tries',
    'is_online',
    'access_mode',
    'parking_key',
    'issuer_public_key',
  ]);
  // Signed by default: an issuer public key, no parking key.
  t.like(parking, {
    id: 1,
    currency: 'EUR',
    price_per_hour: '2.50',
    max_duration_minutes: 120,
    tries: 10,
    is_online: true,
    access_mode: 'signed',
    parking_key: null,
  });
  t.regex(parking.issuer_public_key as string, /^[0-9a-f]{128}$/);
  const base = [
    'parking',
    'create',
    '--name',
    'Lot',
    '--currency',
    'EUR',
    '--price-per-hour',
    '2.50',
    '--max-duration-minutes',
    '120',
  ];
  for (const [flag, bad] of [
    ['--currency', 'EURO'],
    ['--currency', 'XYZ'],
    ['--price-per-hour', '2.505'],
    ['--price-per-hour', '-1'],
    ['--tries', '0'],
    ['--tries', '256'],
    ['--max-duration-minutes', 'ten'],
    ['--access', 'open'],
    ['--access', 'SIGNED'],
  ] as const) {
    const args = [...base];
    const at = args.indexOf(flag);
    if (at >= 0) args[at + 1] = bad;
    else args.push(flag, bad);
    const result = await cli.run(...args);
    t.is(result.code, 2, `${flag} ${bad}`);
    t.is(result.stderr.trim().split('\n').length, 1, result.stderr);
    t.true(result.stderr.includes(flag));
  }
});

test('parking show: settings, access mode, issuer public keys and boxes, never a secret key; an unknown id is one line, exit 1', async (t) => {
  const cli = admin(t);
  const signed = await cli.json<Record<string, unknown>>(
    'parking',
    'create',
    '--name',
    'New lot',
    '--currency',
    'EUR',
    '--price-per-hour',
    '2.5',
    '--max-duration-minutes',
    '60',
  );
  const sealed = await cli.json<Record<string, unknown>>(
    'parking',
    'create',
    '--name',
    'Old lot',
    '--currency',
    'EUR',
    '--price-per-hour',
    '1',
    '--max-duration-minutes',
    '60',
    '--access',
    'sealed',
  );
  await cli.json(
    'box',
    'add',
    '--parking',
    '1',
    '--module-id',
    '7001',
    '--mac',
    'AA:BB:CC:DD:EE:01',
    '--direction',
    'entrance',
  );

  const shown = await cli.json<Record<string, unknown>>('parking', 'show', '--id', '1');
  t.deepEqual(shown, {
    id: 1,
    name: 'New lot',
    description: null,
    currency: 'EUR',
    price_per_hour: '2.50',
    max_duration_minutes: 60,
    tries: 10,
    is_online: false,
    access_mode: 'signed',
    issuer_public_key: signed.issuer_public_key,
    issuer_previous_public_key: null,
    issuer_next_public_key: null,
    boxes: [{ module_id: 7001, direction: 'entrance', mac_address: 'AA:BB:CC:DD:EE:01' }],
  });
  const sealedText = await cli.run('parking', 'show', '--id', '2');
  t.is(sealedText.code, 0, sealedText.stderr);
  t.regex(sealedText.stdout, /^access_mode: sealed$/m);
  t.false(sealedText.stdout.includes(String(sealed.parking_key)), 'the parking key goes to boxes only');

  const { openDatabase } = await import('../../api/db/open.js');
  const db = openDatabase(cli.env.DATABASE_PATH);
  const privateKey = (
    db.prepare('SELECT issuer_private_key FROM secured_parkings WHERE id = 1').get() as { issuer_private_key: string }
  ).issuer_private_key;
  db.close();
  t.false(JSON.stringify(shown).includes(privateKey));

  const missing = await cli.run('parking', 'show', '--id', '9');
  t.is(missing.code, 1);
  t.is(missing.stderr.trim(), 'parkbench: no secured parking with id 9');
  const bad = await cli.run('parking', 'show', '--id', 'x');
  t.is(bad.code, 2);
});

test('parking create --access sealed|signed: the keys of each mode, stored; the issuer private key only in the database', async (t) => {
  const cli = admin(t);
  const sealed = await cli.json<Record<string, unknown>>(
    'parking',
    'create',
    '--name',
    'Old lot',
    '--currency',
    'EUR',
    '--price-per-hour',
    '1',
    '--max-duration-minutes',
    '60',
    '--access',
    'sealed',
  );
  t.like(sealed, { id: 1, access_mode: 'sealed', issuer_public_key: null });
  t.regex(sealed.parking_key as string, /^[0-9a-f]{32}$/);
  const signed = await cli.json<Record<string, unknown>>(
    'parking',
    'create',
    '--name',
    'New lot',
    '--currency',
    'EUR',
    '--price-per-hour',
    '1',
    '--max-duration-minutes',
    '60',
    '--access',
    'signed',
  );
  t.like(signed, { id: 2, access_mode: 'signed', parking_key: null });
  const text = await cli.run(
    'parking',
    'create',
    '--name',
    'Text lot',
    '--currency',
    'EUR',
    '--price-per-hour',
    '1',
    '--max-duration-minutes',
    '60',
  );
  t.is(text.code, 0, text.stderr);
  t.regex(text.stdout, /^access_mode: signed$/m);
  t.regex(text.stdout, /^issuer_public_key: [0-9a-f]{128}$/m);
  t.regex(text.stdout, /^parking_key: null$/m);

  const { openDatabase } = await import('../../api/db/open.js');
  const { issuerPublicKeyOf } = await import('../../firmware-protocol/index.js');
  const db = openDatabase(cli.env.DATABASE_PATH);
  const rows = db
    .prepare(
      'SELECT id, access_mode, parking_key, issuer_private_key, issuer_public_key FROM secured_parkings ORDER BY id',
    )
    .all() as {
    id: number;
    access_mode: string;
    parking_key: string | null;
    issuer_private_key: string | null;
    issuer_public_key: string | null;
  }[];
  db.close();
  t.like(rows[0], {
    access_mode: 'sealed',
    parking_key: String(sealed.parking_key),
    issuer_private_key: null,
    issuer_public_key: null,
  });
  t.like(rows[1], { access_mode: 'signed', parking_key: null, issuer_public_key: String(signed.issuer_public_key) });
  const privateKey = rows[1]?.issuer_private_key ?? '';
  t.regex(privateKey, /^[0-9a-f]{64}$/);
  t.is(
    issuerPublicKeyOf(Buffer.from(privateKey, 'hex')).toString('hex'),
    String(signed.issuer_public_key),
    'the stored pair is one pair',
  );
  t.not(rows[2]?.issuer_private_key, privateKey, 'each parking has its own pair');
  t.false(text.stdout.includes(rows[2]?.issuer_private_key ?? '-'), 'the text output holds no private key');

  const bad = await cli.run(
    'parking',
    'create',
    '--name',
    'Lot',
    '--currency',
    'EUR',
    '--price-per-hour',
    '1',
    '--max-duration-minutes',
    '60',
    '--access',
    'both',
  );
  t.is(bad.code, 2);
  t.is(bad.stderr.trim(), 'parkbench: --access must be signed or sealed, got "both"');
});

test('box add --json, uniqueness, 32 boxes a parking, unknown parking exit 1', async (t) => {
  const cli = admin(t);
  await cli.json(
    'parking',
    'create',
    '--name',
    'Lot',
    '--currency',
    'EUR',
    '--price-per-hour',
    '1',
    '--max-duration-minutes',
    '60',
  );
  const box = await cli.json<Record<string, unknown>>(
    'box',
    'add',
    '--parking',
    '1',
    '--module-id',
    '4294967295',
    '--mac',
    'aa:bb:cc:dd:ee:01',
    '--direction',
    'entrance',
  );
  t.deepEqual(keys(box), [
    'module_id',
    'parking_id',
    'direction',
    'mac_address',
    'box_key',
    'mqtt_username',
    'mqtt_password',
    'simulated',
  ]);
  t.like(box, {
    module_id: 4294967295,
    parking_id: 1,
    direction: 'entrance',
    mac_address: 'AA:BB:CC:DD:EE:01',
    mqtt_username: 'box-4294967295',
    simulated: false,
  });
  t.regex(box.box_key as string, /^[0-9a-f]{32}$/);
  t.regex(box.mqtt_password as string, /^[A-Za-z0-9_-]+$/);

  const refused = [
    ['--parking', '1', '--module-id', '4294967295', '--mac', '00:00:00:00:00:02', '--direction', 'exit'],
    ['--parking', '1', '--module-id', '5', '--mac', 'AA:BB:CC:DD:EE:01', '--direction', 'exit'],
    ['--parking', '99', '--module-id', '6', '--mac', '00:00:00:00:00:03', '--direction', 'exit'],
  ];
  for (const args of refused) {
    const result = await cli.run('box', 'add', ...args);
    t.is(result.code, 1, args.join(' '));
    t.is(result.stderr.trim().split('\n').length, 1);
  }
  for (const args of [
    ['--parking', '1', '--module-id', '4294967296', '--mac', '00:00:00:00:00:04', '--direction', 'exit'],
    ['--parking', '1', '--module-id', '7', '--mac', '00:00:00:00:04', '--direction', 'exit'],
    ['--parking', '1', '--module-id', '7', '--mac', '00:00:00:00:00:04', '--direction', 'sideways'],
    ['--parking', 'one', '--module-id', '7', '--mac', '00:00:00:00:00:04', '--direction', 'exit'],
  ]) {
    t.is((await cli.run('box', 'add', ...args)).code, 2, args.join(' '));
  }
});

test('box add marks a box real unless --simulated; box status (text and --json) says which; the demo makes simulated boxes', async (t) => {
  const cli = admin(t);
  const demo = await cli.json<{ parking_id: number }>('demo');
  const add = (moduleId: string, mac: string, ...more: string[]) =>
    cli.json<{ simulated: boolean }>(
      'box',
      'add',
      ...['--parking', String(demo.parking_id), '--module-id', moduleId, '--mac', mac, '--direction', 'entrance'],
      ...more,
    );
  t.false((await add('4242', '00:07:80:AA:BB:01')).simulated);
  t.true((await add('4243', '00:07:80:AA:BB:02', '--simulated')).simulated);

  const statuses = await cli.json<{ module_id: number; simulated: boolean }[]>('box', 'status');
  t.deepEqual(
    statuses.map(({ module_id, simulated }) => ({ module_id, simulated })),
    [
      { module_id: 4242, simulated: false },
      { module_id: 4243, simulated: true },
      { module_id: 9101, simulated: true },
      { module_id: 9102, simulated: true },
    ],
  );
  const text = await cli.run('box', 'status', '--parking', String(demo.parking_id));
  t.is(text.code, 0, text.stderr);
  t.regex(text.stdout, /^box 4242 \(entrance, parking 1, real\): /m);
  t.regex(text.stdout, /^box 4243 \(entrance, parking 1, simulated\): /m);
  t.regex(text.stdout, /^box 9101 \(entrance, parking 1, simulated\): /m);
  const again = await cli.json<{ boxes: { module_id: number; simulated: boolean }[] }>('demo');
  t.deepEqual(
    again.boxes.map(({ module_id, simulated }) => ({ module_id, simulated })),
    [
      { module_id: 4242, simulated: false },
      { module_id: 4243, simulated: true },
      { module_id: 9101, simulated: true },
      { module_id: 9102, simulated: true },
    ],
    "admin demo lists the demo parking's boxes, each simulated or real",
  );
});

test('at most 32 boxes a parking', async (t) => {
  const { openDatabase } = await import('../../api/db/open.js');
  const cli = admin(t);
  await cli.json(
    'parking',
    'create',
    '--name',
    'Lot',
    '--currency',
    'EUR',
    '--price-per-hour',
    '1',
    '--max-duration-minutes',
    '60',
  );
  const db = openDatabase(cli.env.DATABASE_PATH);
  const insert = db.prepare(
    "INSERT INTO boxes (module_id, parking_id, direction, mac_address, box_key, mqtt_username, mqtt_password_hash, created_at) VALUES (?, 1, 'entrance', ?, 'k', ?, 'h', 0)",
  );
  for (let i = 0; i < 32; i += 1) insert.run(i, `00:00:00:00:01:${i.toString(16).padStart(2, '0')}`, `box-${i}`);
  db.close();
  const result = await cli.run(
    'box',
    'add',
    '--parking',
    '1',
    '--module-id',
    '100',
    '--mac',
    '00:00:00:00:02:00',
    '--direction',
    'exit',
  );
  t.is(result.code, 1);
  t.regex(result.stderr, /32 boxes/);
});

test('box provision prints the docs/protocol.md file, issues a new MQTT password, --out writes mode 0600', async (t) => {
  const cli = admin(t);
  const parking = await cli.json<{ parking_key: null; issuer_public_key: string }>(
    'parking',
    'create',
    '--name',
    'Lot',
    '--currency',
    'EUR',
    '--price-per-hour',
    '1',
    '--max-duration-minutes',
    '60',
  );
  const box = await cli.json<{ box_key: string; mqtt_password: string }>(
    'box',
    'add',
    '--parking',
    '1',
    '--module-id',
    '9101',
    '--mac',
    '00:07:80:AA:BB:01',
    '--direction',
    'entrance',
  );
  const printed = await cli.run('box', 'provision', '--module-id', '9101');
  t.is(printed.code, 0);
  const file = JSON.parse(printed.stdout) as Record<string, unknown> & { mqtt: Record<string, string> };
  const fileFields = [
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
  ];
  t.deepEqual(keys(file), fileFields);
  // A signed parking's box: the issuer public key, no parking key.
  t.like(file, {
    module_id: 9101,
    parking_id: 1,
    direction: 'entrance',
    mac_address: '00:07:80:AA:BB:01',
    parking_key: null,
    parking_key_next: null,
    issuer_key: parking.issuer_public_key,
    issuer_key_previous: null,
    box_key: box.box_key,
    skew_seconds: 120,
    min_battery_mv: 3300,
  });
  // A sealed parking's box: the parking key, no issuer key.
  const sealed = await cli.json<{ id: number; parking_key: string }>(
    'parking',
    'create',
    '--name',
    'Old lot',
    '--currency',
    'EUR',
    '--price-per-hour',
    '1',
    '--max-duration-minutes',
    '60',
    '--access',
    'sealed',
  );
  await cli.json(
    'box',
    'add',
    '--parking',
    String(sealed.id),
    '--module-id',
    '9201',
    '--mac',
    '00:07:80:AA:BC:01',
    '--direction',
    'exit',
  );
  const sealedFile = JSON.parse((await cli.run('box', 'provision', '--module-id', '9201')).stdout) as Record<
    string,
    unknown
  >;
  t.deepEqual(keys(sealedFile), fileFields);
  t.like(sealedFile, {
    parking_id: sealed.id,
    parking_key: sealed.parking_key,
    parking_key_next: null,
    issuer_key: null,
    issuer_key_previous: null,
  });
  t.deepEqual(keys(file.mqtt), ['url', 'username', 'password']);
  t.is(file.mqtt.url, 'mqtt://127.0.0.1:1883');
  t.is(file.mqtt.username, 'box-9101');
  t.not(file.mqtt.password, box.mqtt_password);

  const { openDatabase } = await import('../../api/db/open.js');
  const { verifyMqttPassword } = await import('../../api/auth/mqtt-password.js');
  const db = openDatabase(cli.env.DATABASE_PATH);
  const { mqtt_password_hash: hash } = db.prepare('SELECT mqtt_password_hash FROM boxes').get() as {
    mqtt_password_hash: string;
  };
  db.close();
  t.true(await verifyMqttPassword(file.mqtt.password ?? '', hash));
  t.false(await verifyMqttPassword(box.mqtt_password, hash), 'the old password stops working');

  const out = join(cli.dir, 'box-9101.json');
  const written = await runCli(['admin', 'box', 'provision', '--module-id', '9101', '--out', out], {
    env: { ...cli.env, MQTT_URL: 'mqtts://broker.test:8883' },
  });
  t.is(written.code, 0);
  t.is(statSync(out).mode & 0o777, 0o600);
  t.is((JSON.parse(readFileSync(out, 'utf8')) as { mqtt: { url: string } }).mqtt.url, 'mqtts://broker.test:8883');
  t.is((await cli.run('box', 'provision', '--module-id', '1')).code, 1);
  t.is((await cli.run('box', 'provision', '--module-id', 'x')).code, 2);
});

test("fleet provision of a signed parking: every file holds its parking's issuer public key; --create-parkings makes signed parkings with pairs of their own", async (t) => {
  const cli = admin(t);
  const parking = await cli.json<{ id: number; issuer_public_key: string }>(
    'parking',
    'create',
    '--name',
    'Lot',
    '--currency',
    'EUR',
    '--price-per-hour',
    '1',
    '--max-duration-minutes',
    '60',
  );
  const out = join(cli.dir, 'fleet.json');
  const fleet = await cli.json<{ parking_ids: number[] }>(
    'fleet',
    'provision',
    '--parking',
    String(parking.id),
    '--count',
    '33',
    '--out',
    out,
    '--create-parkings',
  );
  t.is(fleet.parking_ids.length, 2);
  const files = JSON.parse(readFileSync(out, 'utf8')) as {
    parking_id: number;
    parking_key: string | null;
    parking_key_next: string | null;
    issuer_key: string | null;
    issuer_key_previous: string | null;
  }[];
  t.true(
    files.every(
      (file) => file.parking_key === null && file.parking_key_next === null && file.issuer_key_previous === null,
    ),
  );
  t.deepEqual([...new Set(files.slice(0, 32).map((file) => file.issuer_key))], [parking.issuer_public_key]);
  const spread = files[32];
  t.is(spread?.parking_id, fleet.parking_ids[1]);
  t.regex(spread?.issuer_key ?? '', /^[0-9a-f]{128}$/);
  t.not(spread?.issuer_key, parking.issuer_public_key, 'the new parking has its own issuer pair');
  const { openDatabase } = await import('../../api/db/open.js');
  const db = openDatabase(cli.env.DATABASE_PATH);
  const created = db
    .prepare('SELECT access_mode, issuer_public_key FROM secured_parkings WHERE id = ?')
    .get(fleet.parking_ids[1]);
  db.close();
  t.deepEqual(created, { access_mode: 'signed', issuer_public_key: spread?.issuer_key });
});

test('parking forwarding --json keeps its secret across changes, shown once', async (t) => {
  const cli = admin(t);
  await cli.json(
    'parking',
    'create',
    '--name',
    'Lot',
    '--currency',
    'EUR',
    '--price-per-hour',
    '1',
    '--max-duration-minutes',
    '60',
  );
  const first = await cli.json<Record<string, unknown>>(
    'parking',
    'forwarding',
    '--parking',
    '1',
    '--url',
    'https://third.party/hook',
    '--expose',
    'true',
  );
  t.deepEqual(keys(first), [
    'parking_id',
    'url',
    'expose',
    'forward_unverified',
    'forwarding_secret',
    'previous_secret_until',
  ]);
  t.regex(String(first.forwarding_secret), /^whsec_/);
  t.like(first, { parking_id: 1, url: 'https://third.party/hook', expose: true, forward_unverified: false });
  const second = await cli.json<Record<string, unknown>>(
    'parking',
    'forwarding',
    '--parking',
    '1',
    '--url',
    'https://third.party/other',
    '--expose',
    'false',
  );
  t.is(second.forwarding_secret, null, 'kept, not shown again');
  const unverified = await cli.json<Record<string, unknown>>(
    'parking',
    'forwarding',
    '--parking',
    '1',
    '--url',
    'https://third.party/other',
    '--expose',
    'true',
    '--forward-unverified',
    'true',
  );
  t.like(unverified, { expose: true, forward_unverified: true });
  const kept = await cli.json<Record<string, unknown>>(
    'parking',
    'forwarding',
    '--parking',
    '1',
    '--url',
    'https://third.party/hook',
    '--expose',
    'true',
  );
  t.is(kept.forward_unverified, true, 'kept when the flag is not given');
  const off = await cli.json<Record<string, unknown>>(
    'parking',
    'forwarding',
    '--parking',
    '1',
    '--url',
    'https://third.party/hook',
    '--expose',
    'true',
    '--forward-unverified',
    'false',
  );
  t.is(off.forward_unverified, false);
  t.is(
    (
      await cli.run(
        'parking',
        'forwarding',
        '--parking',
        '1',
        '--url',
        'https://x.test',
        '--expose',
        'true',
        '--forward-unverified',
        'maybe',
      )
    ).code,
    2,
  );
  t.is(
    (await cli.run('parking', 'forwarding', '--parking', '2', '--url', 'https://x.test', '--expose', 'true')).code,
    1,
  );
  t.is((await cli.run('parking', 'forwarding', '--parking', '1', '--url', 'ftp://x.test', '--expose', 'true')).code, 2);
  t.is(
    (await cli.run('parking', 'forwarding', '--parking', '1', '--url', 'https://x.test', '--expose', 'yes')).code,
    2,
  );
});

test('user create --json; duplicate email exit 1; bad flags exit 2', async (t) => {
  const cli = admin(t);
  const args = [
    'user',
    'create',
    '--email',
    'Op@Example.com',
    '--password',
    'long enough',
    '--first-name',
    'Op',
    '--last-name',
    'Erator',
    '--phone',
    '+1 555',
  ];
  const user = await cli.json<Record<string, unknown>>(...args);
  t.deepEqual(user, { id: 1, email: 'op@example.com', first_name: 'Op', last_name: 'Erator', phone: '+1 555' });
  t.is((await cli.run(...args)).code, 1);
  t.is(
    (
      await cli.run(
        'user',
        'create',
        '--email',
        'nope',
        '--password',
        'long enough',
        '--first-name',
        'a',
        '--last-name',
        'b',
        '--phone',
        '1',
      )
    ).code,
    2,
  );
  t.is(
    (
      await cli.run(
        'user',
        'create',
        '--email',
        'a@b.co',
        '--password',
        'short',
        '--first-name',
        'a',
        '--last-name',
        'b',
        '--phone',
        '1',
      )
    ).code,
    2,
  );
  t.is((await cli.run('user', 'create', '--email', 'a@b.co')).code, 2);
  // The API's "printable text" rule, for names and phone alike.
  for (const [flag, bad] of [
    ['--first-name', '\u202Eevil'],
    ['--last-name', '\u200B'],
    ['--phone', '+1\u0007555'],
  ] as const) {
    const base = { '--first-name': 'a', '--last-name': 'b', '--phone': '1' };
    const flags = Object.entries({ ...base, [flag]: bad }).flat();
    const result = await cli.run('user', 'create', '--email', 'c@d.co', '--password', 'long enough', ...flags);
    t.is(result.code, 2, flag);
    t.regex(result.stderr, new RegExp(`${flag} must be 1 to \\d+ characters of printable text`));
  }
});

test('demo is idempotent and its credentials work against the API and the broker', async (t) => {
  const cli = admin(t);
  type Demo = Record<string, unknown> & {
    driver: { email: string; password: string };
    client_app_id: string;
    client_secret: string;
    mqtt_operator: { username: string; password: string };
  };
  const first = await cli.json<Demo>('demo');
  t.deepEqual(keys(first), ['client_app_id', 'client_secret', 'driver', 'parking_id', 'boxes', 'mqtt_operator']);
  t.deepEqual(first.boxes, [
    { module_id: 9101, direction: 'entrance', mac_address: '02:50:42:00:23:8D', simulated: true },
    { module_id: 9102, direction: 'exit', mac_address: '02:50:42:00:23:8E', simulated: true },
  ]);
  const second = await cli.json<Demo>('demo');
  const { mqtt_operator: firstOperator, ...firstData } = first;
  const { mqtt_operator: secondOperator, ...secondData } = second;
  t.deepEqual(secondData, firstData);
  t.is(secondOperator.username, 'op-demo-tools');
  t.is(secondOperator.username, firstOperator.username);
  t.not(secondOperator.password, firstOperator.password, 'a new password at each run: the stored one is a hash');
  const human = await cli.run('demo');
  t.regex(human.stdout, /mqtt_operator:\n {2}username: op-demo-tools\n {2}password: \S+/);

  const { createService } = await import('../../api/service.js');
  const { configWith } = await import('../../api/config/index.js');
  const service = await createService(configWith({ databasePath: cli.env.DATABASE_PATH }));
  const { app } = service;
  t.teardown(() => service.close());
  const response = await app.inject({
    method: 'POST',
    url: '/api/oauth/token',
    payload: {
      grant_type: 'password',
      username: first.driver.email,
      password: first.driver.password,
      client_app_id: first.client_app_id,
      client_secret: first.client_secret,
    },
  });
  t.is(response.statusCode, 200);
  // The broker's login: the last password printed, as an operator; the one before no longer.
  const accounts = new MqttAccountRepository(service.ctx.store);
  const third = await cli.json<Demo>('demo');
  t.like(await accounts.authenticate(third.mqtt_operator.username, third.mqtt_operator.password), {
    role: 'operator',
  });
  t.is(await accounts.authenticate(second.mqtt_operator.username, second.mqtt_operator.password), null);
  const parking = await service.ctx.store.kysely
    .selectFrom('secured_parkings')
    .select(['name', 'currency', 'price_per_hour_minor', 'max_duration_minutes', 'tries'])
    .executeTakeFirst();
  t.deepEqual(parking, {
    name: 'Demo parking',
    currency: 'EUR',
    price_per_hour_minor: 250,
    max_duration_minutes: 120,
    tries: 10,
  });
});

test('--database overrides DATABASE_PATH', async (t) => {
  const cli = admin(t);
  const other = join(cli.dir, 'other.sqlite');
  t.is((await cli.run('client-app', 'create', '--name', 'x', '--database', other)).code, 0);
  t.true(statSync(other).isFile());
});
