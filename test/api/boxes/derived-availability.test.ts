// The derivation of true availability (api/mqtt/box-availability.ts), message
// by message on a fake clock. The gateway killed for real is in
// test/gateway/true-availability.test.ts.
import test from 'ava';
import {
  BoxAvailability,
  boxesOfGatewayState,
  type DerivedAvailability,
} from '../../../api/boxes/derived-availability.js';
import { FakeClock } from '../../../lib/fake-clock.js';

function tracker(): {
  availability: BoxAvailability;
  clock: FakeClock;
  heard: [number, DerivedAvailability['availability'], boolean][];
} {
  const clock = new FakeClock(Date.UTC(2026, 10, 23, 12, 0, 0));
  const heard: [number, DerivedAvailability['availability'], boolean][] = [];
  const availability = new BoxAvailability(clock, (moduleId, derived, news) =>
    heard.push([moduleId, derived.availability, news]),
  );
  return { availability, clock, heard };
}

test('a box on MQTT itself: its own availability, nothing else', (t) => {
  const { availability, clock } = tracker();
  t.deepEqual(availability.of(7), { availability: 'unknown', reason: null, since: null, gatewayId: null });
  availability.box(7, true);
  t.deepEqual(availability.of(7), { availability: 'online', reason: null, since: clock.now(), gatewayId: null });
  clock.advance(5_000);
  availability.box(7, false);
  t.deepEqual(availability.of(7), {
    availability: 'offline',
    reason: 'the box reported it offline at 2026-11-23T12:00:05.000Z',
    since: clock.now(),
    gatewayId: null,
  });
});

test('behind a gateway: offline with the gateway and since when; back online only once the gateway reaches it again', (t) => {
  const { availability, clock, heard } = tracker();
  availability.gateway('gw-a', true);
  availability.gatewayBoxes('gw-a', [7, 8]);
  availability.box(7, true);
  availability.box(8, true);
  t.like(availability.of(7), { availability: 'online', gatewayId: 'gw-a' });

  clock.advance(60_000);
  availability.gateway('gw-a', false);
  const reason = 'gateway gw-a offline since 2026-11-23T12:01:00.000Z';
  t.deepEqual(availability.of(7), { availability: 'offline', reason, since: clock.now(), gatewayId: 'gw-a' });
  t.deepEqual(heard.slice(-2), [
    [7, 'offline', false],
    [8, 'offline', false],
  ]);
  clock.advance(1_000);
  availability.gateway('gw-a', false); // a repeat keeps the first "since"
  t.is(availability.of(7).reason, reason);

  clock.advance(60_000);
  availability.gateway('gw-a', true);
  t.deepEqual(
    availability.of(7),
    {
      availability: 'offline',
      reason: 'gateway gw-a went offline at 2026-11-23T12:01:00.000Z and has not reached it since',
      since: Date.UTC(2026, 10, 23, 12, 1, 0),
      gatewayId: 'gw-a',
    },
    "the box's stale online does not come back with the gateway",
  );
  availability.box(7, true);
  t.like(availability.of(7), { availability: 'online', reason: null, gatewayId: 'gw-a' });
  t.is(availability.of(8).availability, 'offline', 'box 8 not reached again yet');
});

test('a box that moves to another gateway follows that gateway; one a gateway no longer lists is on its own again', (t) => {
  const { availability } = tracker();
  availability.gatewayBoxes('gw-a', [7]);
  availability.box(7, true);
  availability.gatewayBoxes('gw-b', [7]);
  availability.gateway('gw-b', true);
  availability.gateway('gw-a', false);
  t.like(
    availability.of(7),
    { availability: 'online', gatewayId: 'gw-b' },
    "gw-a's death does not touch a box gw-b reaches now",
  );
  availability.gatewayBoxes('gw-a', []);
  t.like(availability.of(7), { availability: 'online', gatewayId: 'gw-b' });
  availability.gatewayBoxes('gw-b', []);
  t.like(availability.of(7), { availability: 'online', gatewayId: null });
});

test("a gateway's state message: the module ids of its boxes; anything else is none", (t) => {
  t.deepEqual(
    boxesOfGatewayState(
      JSON.stringify({
        boxes: [{ module_id: 7, via: 'serial' }, { module_id: 8, via: 'ble' }, { module_id: -1 }, { nope: 1 }],
      }),
    ),
    [7, 8],
  );
  t.is(boxesOfGatewayState('not json'), null);
  t.is(boxesOfGatewayState(JSON.stringify({ links: [] })), null);
});

test('a gateway going offline names the boxes it takes with it, once; a repeated box message keeps its first since', (t) => {
  const { availability, clock } = tracker();
  availability.gatewayBoxes('gw-a', [7, 8]);
  availability.gateway('gw-a', true);
  t.deepEqual(availability.gateway('gw-a', false), [7, 8]);
  t.deepEqual(availability.gateway('gw-a', false), [], 'a repeat');
  availability.box(9, false);
  const since = clock.now();
  clock.advance(1_000);
  availability.box(9, false);
  t.is(availability.of(9).since, since);
});
