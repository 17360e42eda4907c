// Forwarding is no server-side request forgery vector: with
// FORWARDING_ALLOW_PRIVATE false (parkbench api's default) a URL whose host is
// or resolves to an address that is not public is refused at delivery time,
// whatever way the address is written (IPv4 in decimal, hex or octal, IPv6
// that carries an IPv4 address) and a DNS name resolving to 127.0.0.1
// (localhost) included; with it true (parkbench start's default) the same URL
// is delivered to.
import { lookup } from 'node:dns/promises';
import test from 'ava';
import { loadConfig } from '../../../api/config/index.js';
import { nonPublicAddressOf } from '../../../api/forwarding/address-guard.js';
import { nonPublicKind } from '../../../api/forwarding/address-rule.js';
import { setForwarding } from '../../../api/forwarding/parking-settings.js';
import { clockAtNow, forwardingSetup, logs, send } from '../../helpers/forwarding.js';
import { startReceiver, type Answer } from '../../helpers/receiver.js';
import { verifies } from '../../helpers/webhook-receiver.js';

/** What the probe's receiver answered: a 204, delivered. */
const noContent: Answer = (response) => response.writeHead(204).end();

test('nonPublicKind: loopback, private, link-local, unique local and unspecified addresses; public ones pass', (t) => {
  const cases: [string, string | undefined][] = [
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.10', 'private'],
    ['169.254.169.254', 'link-local'],
    ['fe80::1', 'link-local'],
    ['febf:ffff::1', 'link-local'],
    ['fd12:3456::1', 'private (unique local)'],
    ['fc00::1', 'private (unique local)'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['100.64.0.1', 'private (shared address space)'],
    ['192.0.0.8', 'reserved (IETF protocol assignments)'],
    ['192.0.2.1', 'documentation'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.9', 'documentation'],
    ['198.18.0.1', 'benchmarking'],
    ['224.0.0.251', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['8.8.8.8', undefined],
    ['172.32.0.1', undefined],
    ['93.184.216.34', undefined],
    ['2001:4860:4860::8888', undefined],
    ['2606:4700:4700::1111', undefined],
    ['localhost', undefined],
    ['not an address', undefined],
  ];
  for (const [address, kind] of cases) t.is(nonPublicKind(address), kind, address);
});

test('nonPublicKind: an IPv6 address that carries an IPv4 address is judged by it, however written; the special IPv6 ranges are refused', (t) => {
  const cases: [string, string | undefined][] = [
    // IPv4-mapped ::ffff:0:0/96, in every spelling.
    ['::ffff:127.0.0.1', 'loopback, in IPv4-mapped IPv6'],
    ['::ffff:7f00:1', 'loopback, in IPv4-mapped IPv6'],
    ['[::ffff:7f00:1]', 'loopback, in IPv4-mapped IPv6'],
    ['0:0:0:0:0:ffff:127.0.0.1', 'loopback, in IPv4-mapped IPv6'],
    ['0000:0000:0000:0000:0000:FFFF:7F00:0001', 'loopback, in IPv4-mapped IPv6'],
    ['::ffff:a9fe:a9fe', 'link-local, in IPv4-mapped IPv6'],
    ['::ffff:10.0.0.1', 'private, in IPv4-mapped IPv6'],
    ['::ffff:0.0.0.0', 'unspecified, in IPv4-mapped IPv6'],
    ['::ffff:8.8.8.8', undefined],
    ['::ffff:808:808', undefined],
    // IPv4-compatible ::/96 (:: and ::1 are themselves).
    ['::127.0.0.1', 'loopback, in IPv4-compatible IPv6'],
    ['::7f00:1', 'loopback, in IPv4-compatible IPv6'],
    ['::c0a8:101', 'private, in IPv4-compatible IPv6'],
    ['::8.8.8.8', undefined],
    // IPv4-translated ::ffff:0:0:0/96.
    ['::ffff:0:127.0.0.1', 'loopback, in IPv4-translated IPv6'],
    ['::ffff:0:8.8.8.8', undefined],
    // NAT64: the well-known prefix by the IPv4 inside, the local-use one refused.
    ['64:ff9b::127.0.0.1', 'loopback, in NAT64 IPv6'],
    ['64:ff9b::a00:1', 'private, in NAT64 IPv6'],
    ['64:ff9b::8.8.8.8', undefined],
    ['64:ff9b:1::8.8.8.8', 'private (local-use NAT64)'],
    // 6to4 2002::/16 by the IPv4 in its bits 16 to 47.
    ['2002:7f00:1::', 'loopback, in 6to4 IPv6'],
    ['2002:a9fe:a9fe::1', 'link-local, in 6to4 IPv6'],
    ['2002:c0a8:101:1::1', 'private, in 6to4 IPv6'],
    ['2002:808:808::1', undefined],
    // The special IPv6 ranges.
    ['2001::1', 'Teredo tunnel'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo tunnel'],
    ['2001:db8::1', 'documentation'],
    ['3fff::1', 'documentation'],
    ['2001:2::1', 'reserved (IETF protocol assignments)'],
    ['100::1', 'discard'],
    ['fec0::1', 'site-local'],
    ['ff02::1', 'multicast'],
    ['ff0e::1', 'multicast'],
    ['5f00::1', 'reserved (segment routing)'],
    ['::2', 'unspecified, in IPv4-compatible IPv6'],
    ['1::1', 'reserved (not global unicast)'],
    ['4000::1', 'reserved (not global unicast)'],
  ];
  for (const [address, kind] of cases) t.is(nonPublicKind(address), kind, address);
});

test('FORWARDING_ALLOW_PRIVATE is false unless set (parkbench api); a bad value is refused', (t) => {
  t.false(loadConfig({}).forwardingAllowPrivate);
  t.true(loadConfig({ FORWARDING_ALLOW_PRIVATE: 'true' }).forwardingAllowPrivate);
  t.throws(() => loadConfig({ FORWARDING_ALLOW_PRIVATE: 'maybe' }), {
    message: 'FORWARDING_ALLOW_PRIVATE must be true or false, got "maybe"',
  });
  t.is(loadConfig({}).forwardingTimeoutMs, 15_000);
  t.throws(() => loadConfig({ FORWARDING_TIMEOUT_MS: '10' }), {
    message: /^FORWARDING_TIMEOUT_MS must be an integer from 1000 to 300000/,
  });
});

test('refused at delivery time: 127.0.0.1 and localhost (a DNS name resolving to 127.0.0.1); nothing reaches the receiver, nothing is lost', async (t) => {
  const resolved = (await lookup('localhost', { all: true })).map((entry) => entry.address);
  t.true(
    resolved.some((address) => nonPublicKind(address) === 'loopback'),
    `localhost resolves to ${resolved.join(', ')}`,
  );
  const clock = clockAtNow();
  const receiver = await startReceiver(t, undefined, clock);
  const s = await forwardingSetup(t, receiver.url, { clock, config: { forwardingAllowPrivate: false } });
  await send(s, logs(s, 1));
  await s.app.ctx.forwarding.runOnce();
  t.like((await s.app.ctx.outbox.status())[0], {
    pending: 1,
    delivered: 0,
    last_error: 'refused: 127.0.0.1 (loopback); FORWARDING_ALLOW_PRIVATE is false',
  });

  const byName = receiver.url.replace('127.0.0.1', 'localhost');
  await setForwarding(s.app.ctx.store, s.parking.id, { url: byName, expose: true }, clock.now());
  await send(s, logs(s, 1));
  await s.app.ctx.forwarding.runOnce();
  const row = (await s.app.ctx.outbox.status()).find((status) => status.url === byName);
  t.regex(
    row?.last_error ?? '',
    /^refused: localhost resolves to (127\.0\.0\.1|::1) \(loopback\); FORWARDING_ALLOW_PRIVATE is false$/,
  );
  t.is(receiver.received.length, 0, 'no request left the API');
});

test('refused at delivery time, however the loopback address is written in the URL; nothing reaches the receiver', async (t) => {
  const clock = clockAtNow();
  const receiver = await startReceiver(t, [noContent], clock);
  const port = new URL(receiver.url).port;
  const hosts = [
    '[::ffff:127.0.0.1]',
    '[::ffff:7f00:1]',
    '[0:0:0:0:0:ffff:127.0.0.1]',
    '[::ffff:0:127.0.0.1]',
    '[::127.0.0.1]',
    '[64:ff9b::127.0.0.1]',
    '[2002:7f00:1::1]',
    '[::1]',
    '[::]',
    '127.0.0.1',
    '127.1',
    '2130706433',
    '0x7f000001',
    '0177.0.0.1',
    '0x7f.0.0.1',
    '127.000.000.001',
    '0.0.0.0',
    '0',
    'localhost',
  ];
  const s = await forwardingSetup(t, receiver.url, { clock, config: { forwardingAllowPrivate: false } });
  for (const host of hosts) {
    const url = `http://${host}:${port}/hook`;
    await setForwarding(s.app.ctx.store, s.parking.id, { url, expose: true }, clock.now());
    await send(s, logs(s, 1));
  }
  await s.app.ctx.forwarding.runOnce();
  const statuses = await s.app.ctx.outbox.status();
  for (const host of hosts) {
    const url = new URL(`http://${host}:${port}/hook`).href;
    const row = statuses.find((status) => status.url === url || status.url === `http://${host}:${port}/hook`);
    t.like(row, { pending: 1, delivered: 0 }, host);
    t.regex(row?.last_error ?? '', /^refused: .*; FORWARDING_ALLOW_PRIVATE is false$/, host);
  }
  t.is(receiver.received.length, 0, 'no request left the API');
});

test('a URL set by the operator and the delivery to it are judged by the same rule: the mapped loopback is named as such', async (t) => {
  const clock = clockAtNow();
  const receiver = await startReceiver(t, [noContent], clock);
  const url = receiver.url.replace('127.0.0.1', '[::ffff:127.0.0.1]');
  t.deepEqual(await nonPublicAddressOf(url), {
    host: '::ffff:7f00:1',
    address: '::ffff:7f00:1',
    kind: 'loopback, in IPv4-mapped IPv6',
  });
  const s = await forwardingSetup(t, url, { clock, config: { forwardingAllowPrivate: false } });
  await send(s, logs(s, 1));
  await s.app.ctx.forwarding.runOnce();
  t.is(
    (await s.app.ctx.outbox.status())[0]?.last_error,
    'refused: ::ffff:7f00:1 (loopback, in IPv4-mapped IPv6); FORWARDING_ALLOW_PRIVATE is false',
  );
  t.is(receiver.received.length, 0);
});

test('with FORWARDING_ALLOW_PRIVATE true the same URLs are delivered to, localhost included', async (t) => {
  const clock = clockAtNow();
  const receiver = await startReceiver(t, undefined, clock);
  const s = await forwardingSetup(t, receiver.url.replace('127.0.0.1', 'localhost'), {
    clock,
    config: { forwardingAllowPrivate: true },
  });
  await send(s, logs(s, 1));
  await s.app.ctx.forwarding.runOnce();
  t.like((await s.app.ctx.outbox.status())[0], { pending: 0, delivered: 1 });
  t.true(receiver.received.every((request) => verifies(s.secret, request)));
});
