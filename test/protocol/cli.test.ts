// `parkbench protocol ...` through the real entry point (child processes).
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import {
  FrameKind,
  LinkType,
  Status,
  decide,
  encodeLinkFrame,
  openCommand,
  sealCommand,
} from '../../firmware-protocol/index.js';
import { runCli } from '../helpers/run-cli.js';
import { access, boxKey, conditions, config, parkingKey, state } from '../helpers/protocol-fixtures.js';

const keyHex = parkingKey.toString('hex');
const sealArgs = (overrides: Record<string, string> = {}): string[] => {
  const flags: Record<string, string> = {
    '--parking-key': keyHex,
    '--key-id': '42',
    '--parking': '7',
    '--modules': '101,102',
    '--from': '2026-01-01T00:00:00Z',
    '--to': '2026-01-01T02:00:00Z',
    '--entries': '3',
    '--exits': '2',
    ...overrides,
  };
  return ['protocol', 'seal-access', ...Object.entries(flags).flatMap(([k, v]) => (v === '' ? [] : [k, v]))];
};

test('seal-access prints base64 that opens under the parking key with the flags given', async (t) => {
  const result = await runCli(sealArgs());
  t.is(result.code, 0, result.stderr);
  const frame = Buffer.from(result.stdout.trim(), 'base64');
  t.is(frame.toString('base64'), result.stdout.trim(), 'standard padded base64');
  const opened = openCommand(frame, parkingKey);
  if (!opened.ok || opened.command.kind !== FrameKind.ACCESS) return t.fail('does not open');
  t.like(opened.command, { keyId: 42, scope: 7 });
  t.deepEqual(opened.command.body, {
    notBefore: 1_767_225_600,
    notAfter: 1_767_232_800,
    maxEntries: 3,
    maxExits: 2,
    moduleIds: [101, 102],
  });
  t.is(decide(config, state, conditions, frame).status, Status.OK);
});

test('seal-access: a bad flag is one line on stderr and exit code 2 (each rule: cli-input.test.ts)', async (t) => {
  const results = await Promise.all([
    runCli(sealArgs({ '--parking-key': 'abcd' })),
    runCli(sealArgs({ '--from': '2026-01-02T00:00:00Z' })),
    runCli(sealArgs({ '--modules': '' })),
  ]);
  for (const result of results) {
    t.is(result.code, 2, result.stderr);
    t.is(result.stdout, '');
    t.true(result.stderr.trim().length > 0);
  }
  t.is(results[0].stderr, 'parkbench: --parking-key must be 32 hex digits (16 bytes)\n');
  t.is(results[1].stderr, 'parkbench: --from must not be later than --to\n');
});

test('decode: a command, base64 or hex, shows its header; with --key its body', async (t) => {
  const frame = access();
  const sealed = await runCli(['protocol', 'decode', frame.toString('base64')]);
  t.is(sealed.code, 0, sealed.stderr);
  t.like(JSON.parse(sealed.stdout), {
    frame: 'command',
    kind: 1,
    kind_name: 'ACCESS',
    key_id: 42,
    scope: 7,
    body: 'sealed',
  });
  const opened = await runCli(['protocol', 'decode', frame.toString('hex'), '--key', keyHex]);
  t.is(opened.code, 0, opened.stderr);
  t.deepEqual((JSON.parse(opened.stdout) as { body: unknown }).body, {
    not_before: 1_767_225_600,
    not_after: 1_767_232_800,
    max_entries: 2,
    max_exits: 1,
    module_count: 2,
    module_ids: [101, 102],
  });
  const wrong = await runCli(['protocol', 'decode', frame.toString('hex'), '--key', boxKey.toString('hex')]);
  t.is(wrong.code, 1);
  t.regex(wrong.stderr, /AUTH_FAILED/);
});

test('decode: a response, verified with --key and --command', async (t) => {
  const command = access();
  const { response } = decide(config, state, conditions, command);
  const plain = await runCli(['protocol', 'decode', response.toString('base64')]);
  t.is(plain.code, 0, plain.stderr);
  t.like(JSON.parse(plain.stdout), {
    frame: 'response',
    status: 0,
    status_name: 'OK',
    module_id: 101,
    key_id: 42,
    box_seq: 11,
    barrier_name: 'OPENING',
    remaining: 1,
  });
  const verified = await runCli([
    'protocol',
    'decode',
    response.toString('hex'),
    '--key',
    boxKey.toString('hex'),
    '--command',
    command.toString('base64'),
  ]);
  t.is(verified.code, 0, verified.stderr);
  t.like(JSON.parse(verified.stdout), { verified: true });
  const unbound = await runCli(['protocol', 'decode', response.toString('hex'), '--key', boxKey.toString('hex')]);
  t.is(unbound.code, 1);
  t.like(JSON.parse(unbound.stdout), { verified: false });
  t.is(unbound.stderr.trim().split('\n').length, 1);
});

test('decode: link frames, detected by shape, with the inner frame decoded', async (t) => {
  const link = encodeLinkFrame(LinkType.COMMAND, access());
  const result = await runCli(['protocol', 'decode', link.toString('hex')]);
  t.is(result.code, 0, result.stderr);
  t.like(JSON.parse(result.stdout), {
    frame: 'link',
    type: 1,
    type_name: 'COMMAND',
    inner: { frame: 'command', key_id: 42 },
  });
  const request = await runCli([
    'protocol',
    'decode',
    encodeLinkFrame(LinkType.STATUS_REQUEST, Buffer.alloc(0)).toString('hex'),
  ]);
  t.like(JSON.parse(request.stdout), { frame: 'link', type: 2, payload: '' });
});

test('decode --as forces the shape; bytes that are no frame exit 1 with one line; bad flags exit 2', async (t) => {
  const command = sealCommand({ key: boxKey, kind: FrameKind.BATTERY_QUERY, keyId: 1, scope: 101 });
  const forced = await runCli(['protocol', 'decode', '--as', 'response', command.toString('hex')]);
  t.is(forced.code, 1);
  t.regex(forced.stderr, /not a response frame/);
  const [notFrame, notBytes, badShape, badKey] = await Promise.all([
    runCli(['protocol', 'decode', 'AQ==']),
    runCli(['protocol', 'decode', 'not-hex-or-base64!']),
    runCli(['protocol', 'decode', '--as', 'nonsense', '00']),
    runCli(['protocol', 'decode', '--key', '12', command.toString('hex')]),
  ]);
  for (const result of [notFrame, notBytes]) {
    t.is(result.code, 1);
    t.is(result.stderr.trim().split('\n').length, 1);
  }
  t.is(badShape.code, 2);
  t.is(badKey.code, 2);
});

test('vectors --out regenerates a file identical to firmware-protocol/test-vectors.json', async (t) => {
  const out = join(mkdtempSync(join(tmpdir(), 'parkbench-vectors-')), 'v.json');
  const result = await runCli(['protocol', 'vectors', '--out', out]);
  t.is(result.code, 0, result.stderr);
  t.is(
    readFileSync(out, 'utf8'),
    readFileSync(new URL('../../firmware-protocol/test-vectors.json', import.meta.url), 'utf8'),
  );
  t.is((await runCli(['protocol', 'vectors', '--out', out, '--check'])).code, 0);
});

test('protocol --help lists decode, seal-access and vectors', async (t) => {
  const result = await runCli(['protocol', '--help']);
  t.is(result.code, 0);
  for (const word of ['decode', 'seal-access', 'vectors']) t.regex(result.stdout, new RegExp(word));
});
