// The event hub (api/events/hub.ts): ids, the ring buffer's cap and window,
// and what publishing costs on the ingestion path (measured, with a loose
// bound: a regression to JSON or a database read per event would be far
// above it).
import test from 'ava';
import { EventHub } from '../../../api/events/hub.js';
import type { BoxLogStreamItem, RawEvent } from '../../../api/events/types.js';
import { FakeClock } from '../../../lib/fake-clock.js';

function item(id: number): BoxLogStreamItem {
  return {
    id,
    source: 'mqtt',
    equipment_id: 9101,
    secured_parking_id: 1,
    fo_user_id: null,
    smart_key_id: 7,
    session_id: 3,
    type: 'in',
    command: 'A'.repeat(120),
    response: 'B'.repeat(60),
    offline: false,
    created_at: '2026-01-01 00:00:00',
    verified: true,
    box_seq: id,
    status: 'OK',
    received_at: '2026-01-01T00:00:00.000Z',
    via: 'mqtt',
    latency_ms: 3,
  };
}

function ids(hub: EventHub, after: number): number[] {
  const seen: number[] = [];
  hub.forEachAfter(after, (event: RawEvent) => seen.push(event.id));
  return seen;
}

test("ids increase from the clock times 1,000; an earlier process's ids and future ones cannot resume", (t) => {
  const clock = new FakeClock();
  const hub = new EventHub({ clock, replayMs: 300_000, maxEvents: 100 });
  const start = clock.now() * 1000;
  t.is(hub.headId, start);
  hub.publishBox(1);
  hub.publishSession(2);
  t.deepEqual(ids(hub, start), [start + 1, start + 2]);
  t.true(hub.canResumeFrom(start));
  t.true(hub.canResumeFrom(start + 2));
  t.false(hub.canResumeFrom(start + 3), 'from the future');
  t.false(hub.canResumeFrom(start - 1), 'from before this hub');
  const later = new EventHub({ clock: new FakeClock(clock.now() + 1), replayMs: 300_000, maxEvents: 100 });
  t.true(later.headId > hub.headId, "a later process's ids are above an earlier one's");
});

test('past the cap the oldest go; past the window too; a resume from before them is refused', (t) => {
  const clock = new FakeClock();
  const hub = new EventHub({ clock, replayMs: 60_000, maxEvents: 3 });
  const start = hub.headId;
  hub.publishBoxLogs([item(1), item(2), item(3), item(4)]);
  t.deepEqual(ids(hub, start), [start + 2, start + 3, start + 4]);
  t.false(hub.canResumeFrom(start), 'event 1 is gone');
  t.true(hub.canResumeFrom(start + 1));
  t.is(hub.counters.evicted, 1);
  clock.advance(30_000);
  hub.publishBox(5);
  clock.advance(30_001);
  t.deepEqual(ids(hub, start), [start + 5], 'the first four are past the window');
  t.false(hub.canResumeFrom(start + 3));
  t.true(hub.canResumeFrom(start + 4));
});

test('publishing costs well under two microseconds an event, and the ring stays at its cap', (t) => {
  const clock = new FakeClock();
  const hub = new EventHub({ clock, replayMs: 300_000, maxEvents: 100_000 });
  const batch = Array.from({ length: 500 }, (_, index) => item(index));
  // Warm up, then fill the ring several times over (eviction included).
  for (let round = 0; round < 200; round++) hub.publishBoxLogs(batch);
  const rounds = 2_000;
  const started = process.hrtime.bigint();
  for (let round = 0; round < rounds; round++) {
    hub.publishBoxLogs(batch);
    hub.publishBox(9101);
  }
  const perEventNs = Number(process.hrtime.bigint() - started) / (rounds * 501);
  t.log(`publish: ${perEventNs.toFixed(0)} ns an event (${(1e9 / perEventNs / 1e6).toFixed(1)} M events/s)`);
  t.true(perEventNs < 2_000, `${perEventNs} ns an event`);
  t.is(hub.size, 100_000);
  t.is(hub.counters.evicted, (200 + rounds) * 500 + rounds - 100_000, 'the oldest went, the ring stayed at its cap');
});
