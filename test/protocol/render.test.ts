// One-line renderings for box logs: never throw, never need a key for responses.
import test from 'ava';
import {
  FrameKind,
  decide,
  renderCommand,
  renderResponse,
  sealCommand,
  statusReport,
} from '../../firmware-protocol/index.js';
import {
  HOUR,
  T0,
  access,
  batteryQuery,
  conditions,
  config,
  issuerPublic,
  otherIssuerPublic,
  parkingKey,
  revoke,
  setIssuer,
  signedAccess,
  state,
  timeSet,
} from '../helpers/protocol-fixtures.js';

test('renderCommand with the key shows the body', (t) => {
  t.is(
    renderCommand(access(), parkingKey),
    'ACCESS key=42 parking=7 modules=101,102 valid=2026-01-01T00:00:00Z..2026-01-01T02:00:00Z entries=2 exits=1',
  );
  t.is(renderCommand(timeSet(6), config.boxKey), 'TIME_SET seq=6 module=101 time=2026-01-01T01:00:00Z');
  t.is(renderCommand(batteryQuery(7), [config.boxKey]), 'BATTERY_QUERY seq=7 module=101');
});

test('renderCommand without the key shows the header and says the body is sealed', (t) => {
  t.is(renderCommand(access()), 'ACCESS key=42 parking=7 body=sealed(19 bytes)');
  t.is(renderCommand(access(), config.boxKey), 'ACCESS key=42 parking=7 AUTH_FAILED');
});

test('renderCommand and renderResponse never throw on bytes that are no frame', (t) => {
  t.is(renderCommand(Buffer.alloc(0)), 'MALFORMED <0 bytes>');
  t.is(renderCommand(Buffer.from([1, 1, 0])), 'MALFORMED <3 bytes>');
  t.is(renderCommand(Buffer.from([9, 1, 0])), 'UNSUPPORTED_VERSION version=0x09 <3 bytes>');
  t.is(renderResponse(Buffer.alloc(5)), 'MALFORMED <5 bytes>');
  t.is(renderResponse(Buffer.alloc(32)), 'MALFORMED <32 bytes>');
});

test('renderResponse: status, kind, module, key, seq, time, battery, barrier, direction, remaining', (t) => {
  const d = decide(config, state, conditions, access());
  t.is(
    renderResponse(d.response),
    'OK ACCESS module=101 key=42 seq=11 time=2026-01-01T00:01:00Z battery=3700mV barrier=OPENING dir=entrance remaining=1',
  );
  t.is(
    renderResponse(statusReport(config, state, conditions).response),
    'OK - module=101 key=0 seq=11 time=2026-01-01T00:01:00Z battery=3700mV barrier=CLOSED dir=entrance remaining=-',
  );
  const control = decide(
    config,
    state,
    conditions,
    sealCommand({ key: config.boxKey, kind: FrameKind.BATTERY_QUERY, keyId: 3, scope: 101 }),
  );
  t.regex(renderResponse(control.response), /^REPLAY BATTERY_QUERY module=101 key=3 .* dir=control remaining=-$/);
});

test('version 2: ACCESS_SIGNED renders from its clear body (checked when issuer keys are given); REVOKE and SET_ISSUER with K_box', (t) => {
  const signed = signedAccess();
  const text =
    'ACCESS_SIGNED key=42 parking=7 modules=101,102 valid=2026-01-01T00:00:00Z..2026-01-01T02:00:00Z entries=2 exits=1';
  t.is(renderCommand(signed), text);
  t.is(renderCommand(signed, [parkingKey, config.boxKey]), text, 'AES keys do not matter to a signed frame');
  t.is(renderCommand(signed, undefined, [issuerPublic]), text);
  t.is(renderCommand(signed, undefined, otherIssuerPublic), 'ACCESS_SIGNED key=42 parking=7 AUTH_FAILED');
  t.is(renderCommand(signed.subarray(0, 86)), 'ACCESS_SIGNED key=42 parking=7 MALFORMED');
  const revokeFrame = revoke(8, [
    { keyId: 42, until: T0 + 2 * HOUR },
    { keyId: 43, until: T0 },
  ]);
  t.is(
    renderCommand(revokeFrame, config.boxKey),
    'REVOKE seq=8 module=101 keys=42 until 2026-01-01T02:00:00Z, 43 until 2026-01-01T00:00:00Z',
  );
  t.is(renderCommand(revokeFrame), 'REVOKE seq=8 module=101 body=sealed(17 bytes)');
  t.regex(
    renderCommand(setIssuer(9, issuerPublic, null), config.boxKey),
    /^SET_ISSUER seq=9 module=101 issuer=sha256:[0-9a-f]{8} previous=none$/,
  );
  const both = renderCommand(setIssuer(9, otherIssuerPublic, issuerPublic), config.boxKey);
  t.regex(both, /^SET_ISSUER seq=9 module=101 issuer=sha256:[0-9a-f]{8} previous=sha256:[0-9a-f]{8}$/);
  t.false(both.includes(issuerPublic.toString('hex').slice(0, 16)), 'no key in a log line');
  const refused = decide(config, { ...state, revocations: new Map([[42, T0 + HOUR]]) }, conditions, signed);
  t.regex(renderResponse(refused.response), /^REVOKED ACCESS_SIGNED module=101 key=42 .* dir=entrance remaining=2$/);
});
