// Bad input, as properties (fast-check): round trips (1), a changed bit or
// byte never accepted (2), random bytes never throwing anything but
// ProtocolError (3), the streaming decoder recovering from noise (4), no
// frame passing for another kind (5).
import test from 'ava';
import fc from 'fast-check';
import {
  Barrier,
  FrameKind,
  LinkFrameDecoder,
  LinkType,
  MAX_COMMAND_LENGTH,
  MAX_LINK_ENCODED_LENGTH,
  ProtocolError,
  type ResponseFields,
  Status,
  type AccessBody,
  chunkFrame,
  BleReassembler,
  cobsDecode,
  cobsEncode,
  decide,
  decodeLinkFrame,
  encodeLinkFrame,
  openCommand,
  parseCommandHeader,
  parseResponse,
  renderCommand,
  renderResponse,
  sealCommand,
  sealRawCommand,
  sealResponse,
  signRawCommand,
  verifyResponse,
  openSignedCommand,
  signAccessCommand,
  type BoxState,
} from '../../firmware-protocol/index.js';
import {
  boxKey,
  conditions,
  config,
  flipBit,
  issuerPrivate,
  issuerPublic,
  otherIssuerPublic,
  parkingKey,
  state,
} from '../helpers/protocol-fixtures.js';

const u32 = fc.nat({ max: 0xffffffff });
const u8 = fc.nat({ max: 0xff });
const key = fc.uint8Array({ minLength: 16, maxLength: 16 }).map((a) => Buffer.from(a));
const nonce = fc.uint8Array({ minLength: 12, maxLength: 12 }).map((a) => Buffer.from(a));
const accessBody: fc.Arbitrary<AccessBody> = fc.record({
  notBefore: u32,
  notAfter: u32,
  maxEntries: u8,
  maxExits: u8,
  moduleIds: fc.array(u32, { minLength: 1, maxLength: 32 }),
});
const revokeBody = fc.record({
  entries: fc.array(fc.record({ keyId: u32, until: u32 }), { minLength: 1, maxLength: 16 }),
});
const setIssuerBody = fc.record({
  issuerKey: fc.constantFrom(issuerPublic, otherIssuerPublic),
  issuerKeyPrevious: fc.constantFrom(issuerPublic, otherIssuerPublic, null),
});
const command = fc.oneof(
  fc.record({ kind: fc.constant(FrameKind.ACCESS), keyId: u32, scope: u32, body: accessBody }),
  fc.record({ kind: fc.constant(FrameKind.BATTERY_QUERY), keyId: u32, scope: u32, body: fc.constant({}) }),
  fc.record({ kind: fc.constant(FrameKind.TIME_SET), keyId: u32, scope: u32, body: fc.record({ time: u32 }) }),
  fc.record({ kind: fc.constant(FrameKind.REVOKE), keyId: u32, scope: u32, body: revokeBody }),
  fc.record({ kind: fc.constant(FrameKind.SET_ISSUER), keyId: u32, scope: u32, body: setIssuerBody }),
);
const responseFields: fc.Arbitrary<ResponseFields> = fc.record({
  status: fc.constantFrom(...Object.values(Status)),
  kind: u8,
  moduleId: u32,
  keyId: u32,
  boxSeq: u32,
  boxTime: u32,
  batteryMv: fc.nat({ max: 0xffff }),
  barrier: fc.constantFrom(...Object.values(Barrier)),
  direction: fc.constantFrom(0 as const, 1 as const, 2 as const),
  remaining: u8,
});

/** A Buffer as JSON.stringify hands it to a replacer. */
function isBufferJson(value: unknown): value is { type: 'Buffer'; data: number[] } {
  return typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'Buffer';
}

test('property 1: every command kind round-trips through seal and open', (t) => {
  fc.assert(
    fc.property(command, key, nonce, (fields, k, n) => {
      const frame = sealCommand({ ...fields, key: k, nonce: n });
      const opened = openCommand(frame, k);
      // Keys (Buffers) compare by their hex through JSON; Uint8Arrays from decoding are Buffers too.
      const plain = (value: unknown): string =>
        JSON.stringify(value, (_, v: unknown) => (isBufferJson(v) ? Buffer.from(v.data).toString('hex') : v));
      return (
        opened.ok &&
        opened.keyIndex === 0 &&
        plain({ ...opened.command, nonce: opened.command.nonce.toString('hex') }) ===
          plain({ ...fields, nonce: n.toString('hex') })
      );
    }),
    { numRuns: 300 },
  );
  t.pass();
});

test('property 1: responses round-trip through seal, verify and parse; link frames and BLE chunks round-trip', (t) => {
  fc.assert(
    fc.property(
      responseFields,
      key,
      fc.option(fc.uint8Array({ minLength: 0, maxLength: MAX_COMMAND_LENGTH })),
      (fields, k, cmd) => {
        const frame = sealResponse(fields, k, cmd);
        const { version, tag, ...parsed } = parseResponse(frame);
        return (
          version === 1 &&
          tag.length === 8 &&
          verifyResponse(frame, k, cmd) &&
          JSON.stringify(parsed) === JSON.stringify(fields)
        );
      },
    ),
    { numRuns: 300 },
  );
  fc.assert(
    fc.property(
      fc.constantFrom(...Object.values(LinkType)),
      fc.uint8Array({ maxLength: MAX_COMMAND_LENGTH }),
      fc.integer({ min: 23, max: 300 }),
      (type, payload, mtu) => {
        const decoded = decodeLinkFrame(encodeLinkFrame(type, payload));
        const reassembler = new BleReassembler(512);
        const frames = chunkFrame(payload, mtu).map((c) => reassembler.push(c));
        const cobs = cobsDecode(cobsEncode(payload));
        return (
          decoded.type === type &&
          decoded.payload.equals(payload) &&
          frames.at(-1)?.equals(payload) === true &&
          cobs?.equals(payload) === true
        );
      },
    ),
    { numRuns: 300 },
  );
  t.pass();
});

test('property 2: flipping any single bit of a sealed command never yields OK (decide) nor opens', (t) => {
  const box = { ...config, parkingKeyNext: null };
  const boxState = { ...state, lastControlSeq: 0 };
  fc.assert(
    fc.property(
      command.map((c) => ({ ...c, scope: c.kind === FrameKind.ACCESS ? 7 : 101 })),
      fc.nat(),
      (fields, bitSeed) => {
        const k = fields.kind === FrameKind.ACCESS ? parkingKey : boxKey;
        const frame = sealCommand({ ...fields, key: k });
        const bit = bitSeed % (frame.length * 8);
        const flipped = flipBit(frame, bit);
        return !openCommand(flipped, k).ok && decide(box, boxState, conditions, flipped).status !== Status.OK;
      },
    ),
    { numRuns: 500 },
  );
  t.pass();
});

test('property 2 (version 2): no byte changed anywhere in a signed frame is accepted (decide, openSignedCommand)', (t) => {
  fc.assert(
    fc.property(accessBody, u32, nonce, fc.nat(), fc.integer({ min: 1, max: 255 }), (body, keyId, n, at, xor) => {
      // Scope 7 and this box in the list and window, so only the signature stands between the frame and OK.
      const good = {
        ...body,
        notBefore: 0,
        notAfter: 0xffffffff,
        maxEntries: 255,
        maxExits: 255,
        moduleIds: [...body.moduleIds.slice(0, 31), 101],
      };
      const frame = signAccessCommand({ privateKey: issuerPrivate, keyId, scope: 7, nonce: n, body: good });
      const changed = Buffer.from(frame);
      const offset = at % frame.length;
      changed[offset] = (changed[offset] ?? 0) ^ xor;
      const d = decide(config, state, conditions, changed);
      return (
        d.status !== Status.OK &&
        d.command === null &&
        !openSignedCommand(changed, [issuerPublic, otherIssuerPublic]).ok &&
        openSignedCommand(frame, issuerPublic).ok
      );
    }),
    { numRuns: 300 },
  );
  t.pass();
});

test('property 5 (version 2): no frame made for one kind, under any key, passes for another kind', (t) => {
  const kinds = [
    FrameKind.ACCESS,
    FrameKind.BATTERY_QUERY,
    FrameKind.TIME_SET,
    FrameKind.ACCESS_SIGNED,
    FrameKind.REVOKE,
    FrameKind.SET_ISSUER,
  ] as const;
  // The box holds every key: K_park, K_box and an issuer key; a frame is made
  // as kind `made` under one of them, then its kind byte says `claimed`.
  const box = { ...config, parkingKeyNext: null };
  const boxState: BoxState = { ...state, lastControlSeq: 0 };
  fc.assert(
    fc.property(
      fc.constantFrom(...kinds),
      fc.constantFrom(...kinds),
      fc.constantFrom('parking', 'box', 'issuer'),
      fc.uint8Array({ maxLength: 160 }),
      u32,
      (made, claimed, keyName, body, keyId) => {
        const scope = made === FrameKind.ACCESS || made === FrameKind.ACCESS_SIGNED ? 7 : 101;
        const plaintext = Buffer.from(body);
        const frame =
          keyName === 'issuer'
            ? signRawCommand({ privateKey: issuerPrivate, kind: made, keyId, scope, body: plaintext })
            : sealRawCommand({ key: keyName === 'parking' ? parkingKey : boxKey, kind: made, keyId, scope, plaintext });
        const claimedScope = claimed === FrameKind.ACCESS || claimed === FrameKind.ACCESS_SIGNED ? 7 : 101;
        const relabelled = Buffer.from(frame);
        relabelled[1] = claimed;
        relabelled.writeUInt32BE(claimedScope, 6);
        if (claimed === made && claimedScope === scope) return true;
        const d = decide(box, boxState, conditions, relabelled);
        return (
          d.command === null &&
          d.status !== Status.OK &&
          !openCommand(relabelled, [parkingKey, boxKey]).ok &&
          !openSignedCommand(relabelled, issuerPublic).ok
        );
      },
    ),
    { numRuns: 1000 },
  );
  t.pass();
});

test('property 3 (version 2): decide never throws, whatever the bytes and whatever the box holds', (t) => {
  const boxStates = fc.record({
    boxSeq: fc.nat({ max: 0xfffffffe }),
    lastControlSeq: u32,
    tries: fc.array(fc.tuple(u32, fc.record({ count: u8, notAfter: u32 })), { maxLength: 4 }).map((e) => new Map(e)),
    issuerKey: fc.constantFrom(issuerPublic, otherIssuerPublic, null, Buffer.alloc(64, 7), Buffer.alloc(3)),
    issuerKeyPrevious: fc.constantFrom(issuerPublic, null, Buffer.alloc(64)),
    revocations: fc.array(fc.tuple(u32, u32), { maxLength: 70 }).map((e) => new Map(e)),
  });
  const frames = fc.oneof(
    fc.uint8Array({ maxLength: 400 }).map((a) => Buffer.from(a)),
    fc
      .tuple(fc.integer({ min: 0, max: 8 }), fc.uint8Array({ minLength: 20, maxLength: 300 }))
      .map(([kind, rest]) => Buffer.concat([Buffer.from([1, kind]), rest])),
    fc
      .tuple(fc.integer({ min: 4, max: 6 }), u32, fc.uint8Array({ maxLength: 200 }))
      .map(([kind, keyId, rest]) =>
        kind === 4
          ? signRawCommand({ privateKey: issuerPrivate, keyId, scope: 7, body: rest })
          : sealRawCommand({ key: boxKey, kind, keyId, scope: 101, plaintext: rest }),
      ),
  );
  fc.assert(
    fc.property(
      boxStates,
      frames,
      fc.record({
        boxTime: u32,
        batteryMv: fc.nat({ max: 0xffff }),
        barrier: fc.constantFrom(...Object.values(Barrier)),
        jammed: fc.boolean(),
      }),
      fc.option(fc.integer({ min: 0, max: 100 })),
      (boxState, frame, now, capacity) => {
        const box = capacity === null ? config : { ...config, revocationCapacity: capacity };
        const d = decide(box, boxState, now, frame);
        return verifyResponse(d.response, boxKey, frame) && d.state.boxSeq === boxState.boxSeq + 1;
      },
    ),
    { numRuns: 500 },
  );
  t.pass();
});

test('property 2: flipping any single bit of a response never verifies', (t) => {
  fc.assert(
    fc.property(
      responseFields,
      fc.uint8Array({ minLength: 22, maxLength: MAX_COMMAND_LENGTH }),
      fc.nat({ max: 255 }),
      (fields, cmd, bit) => {
        const frame = sealResponse(fields, boxKey, cmd);
        return !verifyResponse(flipBit(frame, bit), boxKey, cmd);
      },
    ),
    { numRuns: 500 },
  );
  t.pass();
});

test('property 3: random bytes up to 1 KiB never throw anything but ProtocolError, and return', (t) => {
  const only = (fn: () => unknown): boolean => {
    try {
      fn();
      return true;
    } catch (error) {
      return error instanceof ProtocolError;
    }
  };
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 1024 }), (raw) => {
      const bytes = Buffer.from(raw);
      // These return statuses or strings: they must not throw at all.
      openCommand(bytes, [parkingKey, boxKey]);
      parseCommandHeader(bytes);
      decide(config, state, conditions, bytes);
      verifyResponse(bytes, boxKey, bytes);
      renderCommand(bytes, parkingKey);
      renderResponse(bytes);
      new LinkFrameDecoder().push(bytes);
      new BleReassembler().push(bytes);
      cobsDecode(bytes);
      // These may refuse with the module's own typed error only.
      return only(() => parseResponse(bytes)) && only(() => decodeLinkFrame(bytes));
    }),
    { numRuns: 1000 },
  );
  // Bytes shaped like frames reach deeper paths: a valid header with random rest.
  fc.assert(
    fc.property(fc.constantFrom(1, 2, 3), fc.uint8Array({ minLength: 28, maxLength: 1000 }), (kind, rest) => {
      const bytes = Buffer.concat([Buffer.from([1, kind]), rest]);
      return (
        decide(config, state, conditions, bytes).status !== Status.OK &&
        only(() => parseResponse(bytes.subarray(0, 32)))
      );
    }),
    { numRuns: 500 },
  );
  t.pass();
});

const linkFrame = fc
  .tuple(fc.constantFrom(...Object.values(LinkType)), fc.uint8Array({ maxLength: MAX_COMMAND_LENGTH }))
  .map(([type, payload]) => ({ type, payload: Buffer.from(payload), bytes: encodeLinkFrame(type, payload) }));

test('property 4: the streaming decoder, fed valid frames split at random with noise between, recovers every frame noise did not touch', (t) => {
  fc.assert(
    fc.property(
      fc.array(
        fc.record({
          frame: linkFrame,
          noise: fc.option(fc.uint8Array({ minLength: 1, maxLength: 400 }), { freq: 2 }),
          noiseEndsWithZero: fc.boolean(),
        }),
        { minLength: 1, maxLength: 20 },
      ),
      fc.array(fc.integer({ min: 1, max: 64 }), { minLength: 1, maxLength: 50 }),
      (items, splits) => {
        const parts: Buffer[] = [];
        const expected: Buffer[] = [];
        for (const item of items) {
          // Noise before a frame touches it unless a 0x00 ends the noise.
          let clean = true;
          if (item.noise !== null) {
            parts.push(Buffer.from(item.noise));
            clean = item.noiseEndsWithZero;
            if (clean) parts.push(Buffer.from([0]));
          }
          parts.push(item.frame.bytes);
          if (clean) expected.push(Buffer.concat([Buffer.from([item.frame.type]), item.frame.payload]));
        }
        const stream = Buffer.concat(parts);
        const decoder = new LinkFrameDecoder();
        const got: Buffer[] = [];
        let offset = 0;
        let i = 0;
        while (offset < stream.length) {
          const size = splits[i++ % splits.length] ?? 1;
          for (const f of decoder.push(stream.subarray(offset, offset + size)))
            got.push(Buffer.concat([Buffer.from([f.type]), f.payload]));
          offset += size;
        }
        // Every expected frame appears, in order (noise may rarely add a frame with a lucky CRC).
        let j = 0;
        for (const frame of got) if (j < expected.length && frame.equals(expected[j] ?? Buffer.alloc(0))) j++;
        return j === expected.length && decoder.pending <= MAX_LINK_ENCODED_LENGTH;
      },
    ),
    { numRuns: 300 },
  );
  t.pass();
});
