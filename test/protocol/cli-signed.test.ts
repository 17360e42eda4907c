// `parkbench protocol` for version 2 (docs/protocol.md, Command frame,
// ACCESS_SIGNED): seal-access --issuer-key, issuer-key, decode of signed
// frames with --issuer-public-key, and decode of REVOKE and SET_ISSUER under
// the box key. Each rule in process (fast), each exit code through the real
// entry point (child processes).
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { UsageError } from '../../cli/errors.js';
import { decodeFrame } from '../../cli/protocol/decode.js';
import { parseIssuerKeyFile, parseIssuerPublicKeysFlag } from '../../cli/protocol/input.js';
import { sealAccessBase64 } from '../../cli/protocol/seal-access.js';
import {
  FrameKind,
  LinkType,
  MAX_COMMAND_LENGTH,
  Status,
  decide,
  encodeLinkFrame,
  issuerKeyFingerprint,
  issuerPrivateKeyObject,
  openSignedCommand,
  parseCommandHeader,
  signRawCommand,
} from '../../firmware-protocol/index.js';
import { runCli } from '../helpers/run-cli.js';
import {
  boxKey,
  conditions,
  config,
  flipBit,
  issuerPrivate,
  issuerPublic,
  otherIssuerPublic,
  parkingKey,
  revoke,
  setIssuer,
  signedAccess,
  state,
} from '../helpers/protocol-fixtures.js';

const folder = mkdtempSync(join(tmpdir(), 'parkbench-cli-signed-'));
const keyFile = (name: string, text: string | Buffer): string => {
  const path = join(folder, name);
  writeFileSync(path, text);
  return path;
};
const issuerObject = issuerPrivateKeyObject(issuerPrivate);
const pkcs8File = keyFile('pkcs8.pem', issuerObject.export({ format: 'pem', type: 'pkcs8' }));
const sec1File = keyFile('sec1.pem', issuerObject.export({ format: 'pem', type: 'sec1' }));
const hexFile = keyFile('scalar.hex', `${issuerPrivate.toString('hex')}\n`);
const p384File = keyFile(
  'p384.pem',
  generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey.export({ format: 'pem', type: 'pkcs8' }),
);
const fingerprint = issuerKeyFingerprint(issuerPublic);

const flags = {
  issuerKey: pkcs8File,
  keyId: '42',
  parking: '7',
  modules: '101,102',
  from: '2026-01-01T00:00:00Z',
  to: '2026-01-01T02:00:00Z',
  entries: '3',
  exits: '2',
};
const cliArgs = (overrides: Record<string, string> = {}): string[] => {
  const named: Record<string, string> = {
    '--issuer-key': flags.issuerKey,
    '--key-id': flags.keyId,
    '--parking': flags.parking,
    '--modules': flags.modules,
    '--from': flags.from,
    '--to': flags.to,
    '--entries': flags.entries,
    '--exits': flags.exits,
    ...overrides,
  };
  return ['protocol', 'seal-access', ...Object.entries(named).flatMap(([k, v]) => (v === '' ? [] : [k, v]))];
};
const oneLine = (text: string): boolean =>
  text.length > 0 && text.endsWith('\n') && text.trim().split('\n').length === 1;

test('seal-access --issuer-key (PKCS#8 PEM, SEC1 PEM, 64 hex digits): an ACCESS_SIGNED that verifies under the issuer and is answered OK', (t) => {
  for (const issuerKey of [pkcs8File, sec1File, hexFile]) {
    const frame = Buffer.from(sealAccessBase64({ ...flags, issuerKey }), 'base64');
    t.is(frame[1], FrameKind.ACCESS_SIGNED);
    const opened = openSignedCommand(frame, [issuerPublic]);
    if (!opened.ok || opened.command.kind !== FrameKind.ACCESS_SIGNED)
      return t.fail(`${issuerKey}: does not verify under the issuer public key`);
    t.like(opened.command, { keyId: 42, scope: 7 });
    t.deepEqual(opened.command.body, {
      notBefore: 1_767_225_600,
      notAfter: 1_767_232_800,
      maxEntries: 3,
      maxExits: 2,
      moduleIds: [101, 102],
    });
    t.is(decide(config, state, conditions, frame).status, Status.OK);
    t.false(openSignedCommand(frame, [otherIssuerPublic]).ok);
  }
});

test('seal-access --issuer-key --nonce: the nonce names the frame; 32 modules make the largest command, 225 bytes', (t) => {
  const modules = Array.from({ length: 32 }, (_, index) => 101 + index).join(',');
  const frame = Buffer.from(sealAccessBase64({ ...flags, modules, nonce: '00112233445566778899aabb' }), 'base64');
  t.is(frame.length, MAX_COMMAND_LENGTH);
  const header = parseCommandHeader(frame);
  if (!header.ok) return t.fail('no header');
  t.is(header.header.nonce.toString('hex'), '00112233445566778899aabb');
  t.true(openSignedCommand(frame, issuerPublic).ok);
});

test('seal-access: exactly one of --parking-key and --issuer-key; flag errors come before the key file is read', (t) => {
  const message = 'exactly one of --parking-key (a sealed ACCESS) and --issuer-key (an ACCESS_SIGNED) is required';
  t.throws(() => sealAccessBase64({ ...flags, issuerKey: undefined }), { instanceOf: UsageError, message });
  t.throws(() => sealAccessBase64({ ...flags, parkingKey: parkingKey.toString('hex') }), {
    instanceOf: UsageError,
    message,
  });
  t.throws(() => sealAccessBase64({ ...flags, issuerKey: join(folder, 'missing.pem'), entries: '300' }), {
    instanceOf: UsageError,
    message: /^--entries/,
  });
});

test('an --issuer-key that is no P-256 private key (another curve or algorithm, a public key, garbage, out of range, unreadable) names the flag in one line', (t) => {
  const files = [
    p384File,
    keyFile(
      'rsa.pem',
      generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ format: 'pem', type: 'pkcs8' }),
    ),
    keyFile('ed25519.pem', generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' })),
    keyFile(
      'public.pem',
      generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'pem', type: 'spki' }),
    ),
    keyFile('garbage.pem', 'not a key at all\n'),
    keyFile('broken.pem', '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n'),
    keyFile(
      'encrypted.pem',
      issuerObject.export({ format: 'pem', type: 'pkcs8', cipher: 'aes-256-cbc', passphrase: 'x' }),
    ),
    keyFile('zero.hex', '00'.repeat(32)),
    keyFile('order.hex', 'ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551'),
    keyFile('short.hex', 'ab'.repeat(31)),
    keyFile('empty.pem', ''),
    join(folder, 'missing.pem'),
    folder,
    '/dev/zero',
  ];
  for (const file of files) {
    const error = t.throws(() => parseIssuerKeyFile('--issuer-key', file), { instanceOf: UsageError }, file);
    t.regex(error.message, /^--issuer-key /, file);
    t.false(error.message.includes('\n'), file);
  }
  t.regex(t.throws(() => parseIssuerKeyFile('--issuer-key', p384File)).message, /ec secp384r1 key, not a P-256/);
  t.regex(
    t.throws(() => parseIssuerKeyFile('--issuer-key', join(folder, 'missing.pem'))).message,
    /cannot be read \(ENOENT\)/,
  );
});

test('--issuer-public-key: one key, several by commas, or repeated; bad hex, a wrong length or a point off the curve names the flag', (t) => {
  const both = `${otherIssuerPublic.toString('hex')},${issuerPublic.toString('hex')}`;
  t.deepEqual(parseIssuerPublicKeysFlag('--issuer-public-key', [both]), [otherIssuerPublic, issuerPublic]);
  t.deepEqual(
    parseIssuerPublicKeysFlag('--issuer-public-key', [
      otherIssuerPublic.toString('hex'),
      ` ${issuerPublic.toString('hex').toUpperCase()} `,
    ]),
    [otherIssuerPublic, issuerPublic],
  );
  const offCurve = Buffer.from(issuerPublic);
  offCurve[63] = (offCurve[63] ?? 0) ^ 1;
  for (const value of [
    'zz'.repeat(64),
    issuerPublic.toString('hex').slice(2),
    `04${issuerPublic.toString('hex')}`,
    offCurve.toString('hex'),
    '00'.repeat(64),
    `${issuerPublic.toString('hex')},`,
    '',
  ]) {
    const error = t.throws(
      () => parseIssuerPublicKeysFlag('--issuer-public-key', [value]),
      { instanceOf: UsageError },
      value,
    );
    t.regex(error.message, /^--issuer-public-key /);
  }
});

test('decode: an ACCESS_SIGNED shows header, clear body and signature (r, s); checked only against the issuer keys given', (t) => {
  const frame = signedAccess({ nonce: Buffer.alloc(12, 0x5a) });
  const unchecked = decodeFrame(frame, {});
  t.is(unchecked.failure, undefined);
  t.like(unchecked.json, {
    frame: 'command',
    version: 1,
    kind: 4,
    kind_name: 'ACCESS_SIGNED',
    key_id: 42,
    scope: 7,
    nonce: '5a'.repeat(12),
    body_length: 19,
  });
  t.deepEqual(unchecked.json.body, {
    not_before: 1_767_225_600,
    not_after: 1_767_232_800,
    max_entries: 2,
    max_exits: 1,
    module_count: 2,
    module_ids: [101, 102],
  });
  t.deepEqual(unchecked.json.signature, {
    r: frame.subarray(41, 73).toString('hex'),
    s: frame.subarray(73, 105).toString('hex'),
  });
  t.is(unchecked.json.signature_check, 'not checked (no --issuer-public-key)');
  t.like(
    decodeFrame(frame, { key: boxKey }).json,
    { signature_check: 'not checked (no --issuer-public-key)' },
    '--key does not apply: nothing is sealed',
  );

  const previous = decodeFrame(frame, { issuerKeys: [otherIssuerPublic, issuerPublic] });
  t.is(previous.failure, undefined);
  t.is(previous.json.signature_check, `valid under issuer ${fingerprint}`);
  for (const bad of [
    decodeFrame(frame, { issuerKeys: [otherIssuerPublic] }),
    decodeFrame(flipBit(frame, 8 * 30), { issuerKeys: [issuerPublic] }),
    decodeFrame(flipBit(frame, 8 * 80), { issuerKeys: [issuerPublic] }),
  ]) {
    t.is(bad.json.signature_check, 'INVALID');
    t.regex(bad.failure ?? '', /^signature: INVALID under --issuer-public-key sha256:/);
  }
});

test('decode: an ACCESS_SIGNED whose clear body is no ACCESS body shows MALFORMED and fails (exit 1), signature checked or not', (t) => {
  const frame = signRawCommand({ privateKey: issuerPrivate, keyId: 42, scope: 7, body: Buffer.alloc(12) });
  for (const outcome of [decodeFrame(frame, {}), decodeFrame(frame, { issuerKeys: [issuerPublic] })]) {
    t.like(outcome.json, { kind_name: 'ACCESS_SIGNED', body_length: 12, body: 'MALFORMED' });
    t.regex(outcome.failure ?? '', /^ACCESS_SIGNED body: MALFORMED/);
  }
  t.is(decodeFrame(frame, { issuerKeys: [issuerPublic] }).json.signature_check, `valid under issuer ${fingerprint}`);
});

test('decode: a link frame carrying an ACCESS_SIGNED of 32 modules checks the inner signature', (t) => {
  const frame = signedAccess({ body: { moduleIds: Array.from({ length: 32 }, (_, index) => 101 + index) } });
  const outcome = decodeFrame(encodeLinkFrame(LinkType.COMMAND, frame), { issuerKeys: [issuerPublic] });
  t.is(outcome.failure, undefined);
  t.like(outcome.json, {
    frame: 'link',
    type_name: 'COMMAND',
    inner: { kind_name: 'ACCESS_SIGNED', body_length: 139, signature_check: `valid under issuer ${fingerprint}` },
  });
});

test('decode --key: REVOKE and SET_ISSUER open under the box key like the other control kinds', (t) => {
  const revoked = decodeFrame(
    revoke(6, [
      { keyId: 42, until: 1_767_232_800 },
      { keyId: 43, until: 1_767_240_000 },
    ]),
    { key: boxKey },
  );
  t.is(revoked.failure, undefined);
  t.like(revoked.json, {
    kind_name: 'REVOKE',
    key_id: 6,
    scope: 101,
    body: {
      entries: [
        { key_id: 42, until: 1_767_232_800 },
        { key_id: 43, until: 1_767_240_000 },
      ],
    },
  });
  const installed = decodeFrame(setIssuer(7, otherIssuerPublic, issuerPublic), { key: boxKey });
  t.is(installed.failure, undefined);
  t.like(installed.json, {
    kind_name: 'SET_ISSUER',
    key_id: 7,
    body: { issuer_key: otherIssuerPublic.toString('hex'), issuer_key_previous: issuerPublic.toString('hex') },
  });
  t.like(decodeFrame(setIssuer(8, issuerPublic, null), { key: boxKey }).json, { body: { issuer_key_previous: null } });
  t.like(decodeFrame(revoke(6, [{ keyId: 42, until: 1 }]), {}).json, { kind_name: 'REVOKE', body: 'sealed' });
});

// Through the real entry point: exit codes, one-line errors, the flags' wiring.

test('CLI: seal-access --issuer-key prints base64 of an ACCESS_SIGNED; bad key flags exit 2 with one line', async (t) => {
  const [signed, neither, both, p384, missing] = await Promise.all([
    runCli(cliArgs()),
    runCli(cliArgs({ '--issuer-key': '' })),
    runCli(cliArgs({ '--parking-key': parkingKey.toString('hex') })),
    runCli(cliArgs({ '--issuer-key': p384File })),
    runCli(cliArgs({ '--issuer-key': join(folder, 'missing.pem') })),
  ]);
  t.is(signed.code, 0, signed.stderr);
  const frame = Buffer.from(signed.stdout.trim(), 'base64');
  t.is(frame.toString('base64'), signed.stdout.trim(), 'standard padded base64');
  t.true(openSignedCommand(frame, issuerPublic).ok);
  for (const result of [neither, both, p384, missing]) {
    t.is(result.code, 2, result.stderr);
    t.is(result.stdout, '');
    t.true(oneLine(result.stderr), result.stderr);
  }
  t.is(
    neither.stderr,
    'parkbench: exactly one of --parking-key (a sealed ACCESS) and --issuer-key (an ACCESS_SIGNED) is required\n',
  );
  t.regex(p384.stderr, /^parkbench: --issuer-key /);
});

test('CLI: issuer-key --out writes a fresh P-256 private key (PEM, mode 0600), prints its public key, never overwrites; seal-access takes it', async (t) => {
  const out = join(folder, 'fresh.pem');
  const made = await runCli(['protocol', 'issuer-key', '--out', out]);
  t.is(made.code, 0, made.stderr);
  const publicHex = made.stdout.trim();
  t.regex(publicHex, /^[0-9a-f]{128}$/);
  t.is(made.stdout, `${publicHex}\n`, 'stdout is the public key alone');
  t.is(statSync(out).mode & 0o777, 0o600);
  const pem = readFileSync(out, 'utf8');
  t.regex(pem, /^-----BEGIN PRIVATE KEY-----\n/);
  t.true(
    openSignedCommand(
      Buffer.from(sealAccessBase64({ ...flags, issuerKey: out }), 'base64'),
      Buffer.from(publicHex, 'hex'),
    ).ok,
  );
  const [again, other] = await Promise.all([
    runCli(['protocol', 'issuer-key', '--out', out]),
    runCli(['protocol', 'issuer-key', '--out', join(folder, 'fresh-2.pem')]),
  ]);
  t.is(again.code, 1);
  t.true(oneLine(again.stderr), again.stderr);
  t.is(readFileSync(out, 'utf8'), pem, 'the existing key is kept: it may be the only copy');
  t.regex(other.stdout, /^[0-9a-f]{128}\n$/);
  t.not(other.stdout.trim(), publicHex, 'two runs, two keys');
});

test('CLI: issuer-key without --out writes data/issuer-key.pem under the working directory (an ignored folder), nothing beside it', async (t) => {
  const cwd = mkdtempSync(join(tmpdir(), 'pb-issuer-default-'));
  const made = await runCli(['protocol', 'issuer-key'], { cwd });
  t.is(made.code, 0, made.stderr);
  t.regex(made.stdout, /^[0-9a-f]{128}\n$/);
  t.deepEqual(readdirSync(cwd), ['data']);
  t.deepEqual(readdirSync(join(cwd, 'data')), ['issuer-key.pem']);
  t.is(statSync(join(cwd, 'data', 'issuer-key.pem')).mode & 0o777, 0o600);
});

test('CLI: decode --issuer-public-key (repeated) says valid or INVALID (exit 1); a bad key value exits 2 in one line', async (t) => {
  const hex = signedAccess().toString('hex');
  const [valid, invalid, bad] = await Promise.all([
    runCli([
      'protocol',
      'decode',
      hex,
      '--issuer-public-key',
      otherIssuerPublic.toString('hex'),
      '--issuer-public-key',
      issuerPublic.toString('hex'),
    ]),
    runCli(['protocol', 'decode', hex, '--issuer-public-key', otherIssuerPublic.toString('hex')]),
    runCli(['protocol', 'decode', hex, '--issuer-public-key', `04${issuerPublic.toString('hex')}`]),
  ]);
  t.is(valid.code, 0, valid.stderr);
  t.like(JSON.parse(valid.stdout), {
    kind_name: 'ACCESS_SIGNED',
    signature_check: `valid under issuer ${fingerprint}`,
  });
  t.is(invalid.code, 1, invalid.stderr);
  t.like(JSON.parse(invalid.stdout), { signature_check: 'INVALID' });
  t.true(oneLine(invalid.stderr), invalid.stderr);
  t.regex(invalid.stderr, /^parkbench: signature: INVALID/);
  t.is(bad.code, 2, bad.stderr);
  t.is(bad.stdout, '');
  t.true(oneLine(bad.stderr), bad.stderr);
  t.regex(bad.stderr, /^parkbench: --issuer-public-key /);
});

test('CLI: protocol --help lists issuer-key; seal-access --help names both key flags', async (t) => {
  const [protocol, seal] = await Promise.all([
    runCli(['protocol', '--help']),
    runCli(['protocol', 'seal-access', '--help']),
  ]);
  t.regex(protocol.stdout, /issuer-key/);
  t.regex(seal.stdout, /--parking-key/);
  t.regex(seal.stdout, /--issuer-key/);
});
