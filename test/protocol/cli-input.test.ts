// The CLI's validation rules, in process (fast); cli.test.ts checks the exit
// codes through the real entry point.
import test from 'ava';
import { CliError, UsageError } from '../../cli/errors.js';
import { decodeFrame, detectShape } from '../../cli/protocol/decode.js';
import { parseFrameText } from '../../cli/protocol/input.js';
import { sealAccessBase64 } from '../../cli/protocol/seal-access.js';
import { LinkType, encodeLinkFrame, openCommand } from '../../firmware-protocol/index.js';
import { access, boxKey, parkingKey } from '../helpers/protocol-fixtures.js';

const flags = {
  parkingKey: parkingKey.toString('hex'),
  keyId: '42',
  parking: '7',
  modules: '101,102',
  from: '2026-01-01T00:00:00Z',
  to: '2026-01-01T02:00:00Z',
  entries: '3',
  exits: '2',
};

test('seal-access: each flag is validated (hex key of 32 digits, u32 ranges, 1..32 modules, from <= to, u8 tries)', (t) => {
  const bad: Partial<typeof flags>[] = [
    { parkingKey: 'abcd' },
    { parkingKey: 'zz'.repeat(16) },
    { keyId: '4294967296' },
    { keyId: '-1' },
    { keyId: '1e3' },
    { parking: 'seven' },
    { modules: '' },
    { modules: Array.from({ length: 33 }, (_, i) => String(i + 1)).join(',') },
    { modules: '1,,2' },
    { modules: '4294967296' },
    { from: '2026-01-02T00:00:00Z' },
    { from: '2026-01-01' },
    { to: 'tomorrow' },
    { to: '2026-13-01T00:00:00Z' },
    { to: '2200-01-01T00:00:00Z' },
    { entries: '256' },
    { exits: '1.5' },
  ];
  for (const override of bad)
    t.throws(() => sealAccessBase64({ ...flags, ...override }), { instanceOf: UsageError }, JSON.stringify(override));
  t.notThrows(() =>
    sealAccessBase64({
      ...flags,
      modules: Array.from({ length: 32 }, (_, i) => String(i)).join(','),
      keyId: '4294967295',
      entries: '255',
      from: flags.to,
    }),
  );
});

test('seal-access: a fixed --nonce gives a reproducible frame that opens', (t) => {
  const a = sealAccessBase64({ ...flags, nonce: '0102030405060708090a0b0c' });
  t.is(a, sealAccessBase64({ ...flags, nonce: '0102030405060708090a0b0c' }));
  t.true(openCommand(Buffer.from(a, 'base64'), parkingKey).ok);
  t.throws(() => sealAccessBase64({ ...flags, nonce: '0102' }), { instanceOf: UsageError });
});

test('bytes: hex (even digits, 0x and spaces allowed) wins over base64; anything else is a CliError (exit 1)', (t) => {
  t.deepEqual(parseFrameText('0x01 02:03'), Buffer.from([1, 2, 3]));
  t.deepEqual(parseFrameText('AQID'), Buffer.from([1, 2, 3]));
  t.deepEqual(parseFrameText('abcd'), Buffer.from([0xab, 0xcd]), 'ambiguous text is read as hex');
  for (const text of ['', '  ', 'AQI', 'not base64!', 'abc']) {
    const error = t.throws(() => parseFrameText(text), { instanceOf: CliError });
    t.false(error instanceof UsageError, text);
  }
});

test('decode: shape detection (link by its trailing 00 and CRC, response by 32 bytes, else command)', (t) => {
  const command = access();
  t.is(detectShape(command), 'command');
  t.is(detectShape(Buffer.alloc(32, 1)), 'response');
  t.is(detectShape(encodeLinkFrame(LinkType.COMMAND, command)), 'link');
  t.is(detectShape(Buffer.from([1, 2, 0])), 'command', 'a trailing 00 without a valid CRC is not a link frame');
  t.throws(() => decodeFrame(Buffer.from([1]), {}), {
    instanceOf: CliError,
    message: /not a command frame: MALFORMED/,
  });
  t.throws(() => decodeFrame(Buffer.from([7]), {}), { instanceOf: CliError, message: /UNSUPPORTED_VERSION/ });
  t.throws(() => decodeFrame(command, { as: 'link' }), { instanceOf: CliError, message: /not a link frame/ });
  t.like(decodeFrame(command, { key: boxKey }), { failure: 'command does not open under --key: AUTH_FAILED' });
});
