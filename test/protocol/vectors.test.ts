// docs/protocol.md, Test vectors: sealing the inputs gives the bytes; opening the
// bytes gives the inputs; the file on disk is what the generator makes.
import { readFileSync } from 'node:fs';
import test, { type ExecutionContext } from 'ava';
import {
  FrameKind,
  LinkType,
  Status,
  crc16,
  decide,
  decodeLinkFrame,
  encodeLinkFrame,
  generateTestVectors,
  isLinkType,
  issuerPublicKeyOf,
  openCommand,
  openSignedCommand,
  parseResponse,
  sealCommand,
  sealResponseWithCommandNonce,
  signAccessCommand,
  statusName,
  testVectorsJson,
  verifyResponse,
  verifySignature,
} from '../../firmware-protocol/index.js';
import { signDeterministic } from '../../firmware-protocol/rfc6979.js';
import {
  type AccessBodyJson,
  type RevokeBodyJson,
  type SetIssuerBodyJson,
  type TestVectors,
  accessBodyFromJson,
  accessBodyToJson,
  boxStateFromJson,
  boxStateToJson,
  responseFieldsFromJson,
  responseFieldsToJson,
  revokeBodyFromJson,
  revokeBodyToJson,
  setIssuerBodyFromJson,
  setIssuerBodyToJson,
} from '../../firmware-protocol/vector-format.js';

const file = readFileSync(new URL('../../firmware-protocol/test-vectors.json', import.meta.url), 'utf8');
const vectors = JSON.parse(file) as TestVectors;
const hex = (text: string): Buffer => Buffer.from(text, 'hex');

test('test-vectors.json is exactly what the generator makes (regenerate with parkbench protocol vectors)', (t) => {
  t.is(file, testVectorsJson());
  t.deepEqual(vectors, JSON.parse(JSON.stringify(generateTestVectors())) as TestVectors);
});

test('the file has the layout docs/protocol.md fixes, and the minimum content', (t) => {
  t.is(vectors.version, 2);
  t.deepEqual(Object.keys(vectors).slice(0, 7), [
    'version',
    'crc16',
    'commands',
    'issuers',
    'signed_commands',
    'responses',
    'link_frames',
  ]);
  t.deepEqual(Object.keys(vectors.commands[0] ?? {}), [
    'name',
    'key',
    'kind',
    'key_id',
    'scope',
    'nonce',
    'body',
    'bytes',
  ]);
  t.deepEqual(Object.keys(vectors.issuers[0] ?? {}), ['name', 'private_key', 'public_key']);
  t.deepEqual(Object.keys(vectors.signed_commands[0] ?? {}), [
    'name',
    'issuer',
    'kind',
    'key_id',
    'scope',
    'nonce',
    'body',
    'bytes',
  ]);
  // Version 2 minimum: REVOKE with 1 and 16 entries, SET_ISSUER with and without a previous key,
  // ACCESS_SIGNED with 1 and 32 modules by two different issuers, a link frame carrying the 32-module one.
  const revokeCounts = vectors.commands
    .filter((c) => c.kind === FrameKind.REVOKE)
    .map((c) => (c.body as RevokeBodyJson).entries.length);
  t.true(revokeCounts.includes(1) && revokeCounts.includes(16));
  const previous = vectors.commands
    .filter((c) => c.kind === FrameKind.SET_ISSUER)
    .map((c) => (c.body as SetIssuerBodyJson).issuer_key_previous);
  t.true(previous.includes(null) && previous.some((p) => p !== null));
  const signed = vectors.signed_commands.map((c) => ({ modules: c.body.module_ids.length, issuer: c.issuer }));
  const one = signed.find((c) => c.modules === 1);
  const thirtyTwo = signed.find((c) => c.modules === 32);
  t.true(one !== undefined && thirtyTwo !== undefined && one.issuer !== thirtyTwo.issuer);
  const longest = vectors.signed_commands.find((c) => c.body.module_ids.length === 32)?.bytes;
  t.true(vectors.link_frames.some((l) => l.type === LinkType.COMMAND && l.payload === longest));
  t.is((longest?.length ?? 0) / 2, 225);
  t.deepEqual(Object.keys(vectors.responses[0] ?? {}), ['name', 'box_key', 'command_nonce', 'fields', 'bytes']);
  t.deepEqual(Object.keys(vectors.responses[0]?.fields ?? {}), [
    'status',
    'kind',
    'module_id',
    'key_id',
    'box_seq',
    'box_time',
    'battery_mv',
    'barrier',
    'direction',
    'remaining',
  ]);
  t.deepEqual(Object.keys(vectors.link_frames[0] ?? {}), ['name', 'type', 'payload', 'bytes']);
  const moduleCounts = vectors.commands
    .filter((c) => c.kind === FrameKind.ACCESS)
    .map((c) => (c.body as AccessBodyJson).module_ids.length);
  t.true(moduleCounts.includes(1) && moduleCounts.includes(32));
  t.true(vectors.commands.some((c) => c.kind === FrameKind.BATTERY_QUERY));
  t.true(vectors.commands.some((c) => c.kind === FrameKind.TIME_SET));
  const statuses = new Set(vectors.responses.map((r) => r.fields.status));
  for (const code of Object.values(Status))
    t.true(statuses.has(code), `a response with status ${String(statusName(code))}`);
  t.true(
    vectors.responses.some(
      (r) =>
        r.fields.kind === 0 &&
        r.fields.key_id === 0 &&
        r.fields.remaining === 0xff &&
        /^0+$/.test(r.command_nonce) &&
        r.fields.status === Status.OK,
    ),
  );
  const types = new Set(vectors.link_frames.map((l) => l.type));
  for (const type of Object.values(LinkType)) t.true(types.has(type), `a link frame of type ${type}`);
});

test('crc16 vectors, CCITT-FALSE check value 0x29B1', (t) => {
  t.is(vectors.crc16.find((v) => v.name === 'check value')?.crc, '29b1');
  for (const v of vectors.crc16)
    t.is(crc16(Buffer.from(v.input_ascii, 'ascii')).toString(16).padStart(4, '0'), v.crc, v.name);
});

for (const v of vectors.commands) {
  test(`command vector "${v.name}": sealing the inputs gives the bytes, opening the bytes gives the inputs`, (t) => {
    const key = hex(v.key);
    const nonce = hex(v.nonce);
    let sealed: Buffer;
    switch (v.kind) {
      case FrameKind.ACCESS:
        sealed = sealCommand({
          key,
          nonce,
          kind: FrameKind.ACCESS,
          keyId: v.key_id,
          scope: v.scope,
          body: accessBodyFromJson(v.body as AccessBodyJson),
        });
        break;
      case FrameKind.BATTERY_QUERY:
        sealed = sealCommand({ key, nonce, kind: FrameKind.BATTERY_QUERY, keyId: v.key_id, scope: v.scope });
        break;
      case FrameKind.REVOKE:
        sealed = sealCommand({
          key,
          nonce,
          kind: FrameKind.REVOKE,
          keyId: v.key_id,
          scope: v.scope,
          body: revokeBodyFromJson(v.body as RevokeBodyJson),
        });
        break;
      case FrameKind.SET_ISSUER:
        sealed = sealCommand({
          key,
          nonce,
          kind: FrameKind.SET_ISSUER,
          keyId: v.key_id,
          scope: v.scope,
          body: setIssuerBodyFromJson(v.body as SetIssuerBodyJson),
        });
        break;
      default:
        sealed = sealCommand({
          key,
          nonce,
          kind: FrameKind.TIME_SET,
          keyId: v.key_id,
          scope: v.scope,
          body: { time: (v.body as { time: number }).time },
        });
    }
    t.is(sealed.toString('hex'), v.bytes);
    const opened = openCommand(hex(v.bytes), key);
    if (!opened.ok) return t.fail(`did not open: ${opened.status}`);
    assertHeader(t, opened.command, v);
    const c = opened.command;
    const bodyJson =
      c.kind === FrameKind.ACCESS || c.kind === FrameKind.ACCESS_SIGNED
        ? accessBodyToJson(c.body)
        : c.kind === FrameKind.REVOKE
          ? revokeBodyToJson(c.body)
          : c.kind === FrameKind.SET_ISSUER
            ? setIssuerBodyToJson(c.body)
            : c.body;
    t.deepEqual(bodyJson, v.body);
  });
}

for (const v of vectors.issuers) {
  test(`issuer vector "${v.name}": the public key is the private key's point`, (t) => {
    t.is(issuerPublicKeyOf(hex(v.private_key)).toString('hex'), v.public_key);
  });
}

for (const v of vectors.signed_commands) {
  // docs/protocol.md, Test vectors: signatures are randomized, so both directions
  // are checked as far as they can be: the stored bytes verify and parse to
  // the fields; frames signed here from the fields verify and differ from the
  // bytes only in the signature.
  test(`signed command vector "${v.name}": the bytes verify and parse to the fields; signing the fields gives the same bytes but the signature`, (t) => {
    const issuer = vectors.issuers[v.issuer];
    if (issuer === undefined) return t.fail('no such issuer');
    const publicKey = hex(issuer.public_key);
    const bytes = hex(v.bytes);
    const opened = openSignedCommand(bytes, publicKey);
    if (!opened.ok) return t.fail(`did not open: ${opened.status}`);
    assertHeader(t, opened.command, v);
    t.deepEqual(opened.command.kind === FrameKind.ACCESS_SIGNED ? accessBodyToJson(opened.command.body) : null, v.body);
    const other = vectors.issuers.find((_, i) => i !== v.issuer);
    t.is(verifySignature(bytes, [hex(other?.public_key ?? '')]), -1, 'the other issuer does not verify it');
    for (let run = 0; run < 2; run++) {
      const mine = signAccessCommand({
        privateKey: hex(issuer.private_key),
        keyId: v.key_id,
        scope: v.scope,
        nonce: hex(v.nonce),
        body: accessBodyFromJson(v.body),
      });
      t.is(mine.length, bytes.length);
      t.true(mine.subarray(0, -64).equals(bytes.subarray(0, -64)), 'same bytes before the signature');
      t.false(mine.subarray(-64).equals(bytes.subarray(-64)), 'a randomized signature differs');
      t.is(verifySignature(mine, [publicKey]), 0);
    }
    // The stored signature is RFC 6979's for these bytes (why the file regenerates byte for byte).
    t.is(signDeterministic(hex(issuer.private_key), bytes.subarray(0, -64)).toString('hex'), v.bytes.slice(-128));
  });
}

test('rfc6979.ts gives RFC 6979 A.2.5 (P-256, SHA-256, message "sample") exactly', (t) => {
  const signature = signDeterministic(
    hex('c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721'),
    Buffer.from('sample'),
  );
  t.is(
    signature.toString('hex'),
    'efd48b2aacb6a8fd1140dd9cd45e81d69d2c877b56aaf991c34d0ea84eaf3716' +
      'f7cb1c942d657c41d436c7a1b6e29f65f3e900dbb9aff4064dc4ab2f843acda8',
  );
});

for (const v of vectors.responses) {
  test(`response vector "${v.name}": sealing the fields gives the bytes, parsing and verifying the bytes gives the fields`, (t) => {
    const key = hex(v.box_key);
    const sealed = sealResponseWithCommandNonce(responseFieldsFromJson(v.fields), key, hex(v.command_nonce));
    t.is(sealed.toString('hex'), v.bytes);
    const { version, tag, ...fields } = parseResponse(hex(v.bytes));
    t.is(version, 1);
    t.is(tag.toString('hex'), v.bytes.slice(48));
    t.deepEqual(responseFieldsToJson(fields), v.fields);
    // The AAD takes command bytes 10..21: any command carrying that nonce.
    const command = Buffer.concat([Buffer.alloc(10, 0x01), hex(v.command_nonce), Buffer.alloc(8)]);
    t.true(verifyResponse(hex(v.bytes), key, /^0+$/.test(v.command_nonce) ? null : command));
  });
}

for (const v of vectors.link_frames) {
  test(`link frame vector "${v.name}": encoding gives the bytes, decoding gives type and payload`, (t) => {
    if (!isLinkType(v.type)) return t.fail('unknown type');
    t.is(encodeLinkFrame(v.type, hex(v.payload)).toString('hex'), v.bytes);
    t.true(v.bytes.endsWith('00'));
    const frame = decodeLinkFrame(hex(v.bytes));
    t.is(frame.type, v.type);
    t.is(frame.payload.toString('hex'), v.payload);
  });
}

for (const v of vectors.decisions) {
  test(`decision vector (docs/protocol.md, step ${v.step}) "${v.name}": ${v.expected.status_name}`, (t) => {
    const config = {
      moduleId: v.config.module_id,
      parkingId: v.config.parking_id,
      direction: v.config.direction,
      parkingKey: v.config.parking_key === null ? null : hex(v.config.parking_key),
      parkingKeyNext: v.config.parking_key_next === null ? null : hex(v.config.parking_key_next),
      boxKey: hex(v.config.box_key),
      skewSeconds: v.config.skew_seconds,
      minBatteryMv: v.config.min_battery_mv,
      revocationCapacity: v.config.revocation_capacity,
    };
    const conditions = {
      boxTime: v.conditions.box_time,
      batteryMv: v.conditions.battery_mv,
      barrier: v.conditions.barrier as 0,
      jammed: v.conditions.jammed,
    };
    const decision = decide(config, boxStateFromJson(v.state), conditions, hex(v.command));
    const status: string | undefined = statusName(decision.status);
    t.is(status, v.expected.status_name);
    t.is(decision.response.toString('hex'), v.expected.response);
    t.deepEqual(boxStateToJson(decision.state), v.expected.state);
    t.true(verifyResponse(decision.response, config.boxKey, hex(v.command)));
  });
}

/** The header fields of an opened command are the vector's (sealed and signed alike). */
function assertHeader(
  t: ExecutionContext,
  command: { kind: number; keyId: number; scope: number; nonce: Buffer },
  v: { kind: number; key_id: number; scope: number; nonce: string },
): void {
  t.is(command.kind, v.kind);
  t.is(command.keyId, v.key_id);
  t.is(command.scope, v.scope);
  t.is(command.nonce.toString('hex'), v.nonce);
}
