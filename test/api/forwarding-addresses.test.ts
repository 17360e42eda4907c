// Forwarding is no server-side request forgery vector (issue 16): with
// FORWARDING_ALLOW_PRIVATE false (parkbench api's default) a URL whose host is
// or resolves to a private, loopback or link-local address is refused at
// delivery time, a DNS name resolving to 127.0.0.1 (localhost) included;
// with it true (parkbench start's default) the same URL is delivered to.
import { lookup } from 'node:dns/promises';
import test from 'ava';
import { loadConfig } from '../../api/config.js';
import { nonPublicKind } from '../../api/forwarding/address-guard.js';
import { setForwarding } from '../../api/parkings/forwarding.js';
import { clockAtNow, forwardingSetup, logs, send } from '../helpers/forwarding.js';
import { startReceiver } from '../helpers/receiver.js';
import { verifies } from '../helpers/webhook-receiver.js';

test('nonPublicKind: loopback, private, link-local, unique local, mapped and unspecified addresses; public ones pass', (t) => {
  const cases: [string, string | undefined][] = [
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.10', 'private'],
    ['169.254.169.254', 'link-local'],
    ['fe80::1', 'link-local'],
    ['fd12:3456::1', 'private (unique local)'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['100.64.0.1', 'private (shared address space)'],
    ['8.8.8.8', undefined],
    ['172.32.0.1', undefined],
    ['93.184.216.34', undefined],
    ['2001:4860:4860::8888', undefined],
    ['::ffff:8.8.8.8', undefined],
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
