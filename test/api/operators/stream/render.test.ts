// The event stream on the store: its renderer reads each
// flush's boxes and sessions in one statement each on both engines, and
// renders what the operator routes return; its flushes await those reads
// without losing or repeating messages when a client joins, an event
// arrives or a client leaves meanwhile, and a read that fails sends nothing
// and is tried again at the next flush. The snapshot's sessions are
// bounded: the newest 200 of the day, with their count.
import test from 'ava';
import { EventHub } from '../../../../api/events/hub.js';
import { LiveBoxStates } from '../../../../api/events/live-states.js';
import {
  SNAPSHOT_SESSIONS,
  StreamRenderer,
  type FlushKeys,
  type Rendered,
  type Snapshot,
} from '../../../../api/operators/stream/render.js';
import { EventStream, type OutgoingMessage, type StreamSink } from '../../../../api/operators/stream/stream.js';
import { BoxEntries } from '../../../../api/operators/box-entries.js';
import { operatorSessions } from '../../../../api/operators/views.js';
import { addOperator, ensureOperator, removeOperator } from '../../../../api/operators/accounts.js';
import { OperatorRepository } from '../../../../api/operators/repository.js';
import { OWNER_CHECK_MS, type StreamOwner } from '../../../../api/operators/stream/owners.js';
import { tokenHash } from '../../../../api/auth/secrets.js';
import type { Store } from '../../../../api/db/store.js';
import { FakeClock } from '../../../../lib/fake-clock.js';
import { insertBox, insertParking, insertSession, insertUser } from '../../../helpers/store-rows.js';
import { storeTests } from '../../../helpers/stores.js';
import { waitFor } from '../../../helpers/wait.js';

const storeTest = storeTests(test);
const NOW = Date.UTC(2026, 10, 23, 12);
const FLUSH_MS = 250;

interface Collected extends StreamSink {
  readonly messages: OutgoingMessage[];
  closed: boolean;
}

function sink(): Collected {
  const messages: OutgoingMessage[] = [];
  return {
    messages,
    closed: false,
    send: (message) => messages.push(message),
    congested: false,
    bufferedBytes: 0,
    close() {
      this.closed = true;
    },
    drop() {
      this.closed = true;
    },
  };
}

/** The real renderer, whose reads wait for `release` while `held`. */
class HeldRenderer {
  held = false;
  failing = false;
  #waiting: (() => void)[] = [];
  constructor(private readonly renderer: StreamRenderer) {}

  async render(keys: FlushKeys, nowMs: number): Promise<Rendered> {
    await this.#gate();
    return this.renderer.render(keys, nowMs);
  }

  async snapshot(nowMs: number): Promise<Snapshot> {
    await this.#gate();
    return this.renderer.snapshot(nowMs);
  }

  /** Reads waiting for `release`. */
  get waiting(): number {
    return this.#waiting.length;
  }

  release(): void {
    this.held = false;
    for (const resume of this.#waiting.splice(0)) resume();
  }

  async #gate(): Promise<void> {
    if (this.held) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    if (this.failing) throw Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
  }
}

async function seeded(store: Store) {
  const parkingId = await insertParking(store, { created_at: NOW });
  await insertBox(store, { moduleId: 9401, parkingId, createdAt: NOW });
  await insertBox(store, { moduleId: 9402, parkingId, createdAt: NOW, direction: 'exit' });
  const userId = await insertUser(store, NOW);
  const sessionId = await insertSession(store, { userId, parkingId, startTime: NOW });
  return { parkingId, sessionId };
}

/** The stream over the store, and an operator of it whose clients the tests add. */
async function streamOn(store: Store) {
  const clock = new FakeClock(NOW);
  const hub = new EventHub({ clock, replayMs: 300_000, maxEvents: 10_000 });
  const renderer = new HeldRenderer(new StreamRenderer(store, new LiveBoxStates()));
  const errors: unknown[] = [];
  const operators = new OperatorRepository(store);
  const stream = new EventStream({
    hub,
    renderer,
    clock,
    flushMs: FLUSH_MS,
    operatorTokens: (ids) => operators.tokenHashesOf(ids),
    onError: (error) => errors.push(error),
  });
  const operator = await ownerOf(store, 'bench');
  return { clock, hub, renderer, stream, errors, operator };
}

/** A new operator of the store, as a stream opened with its token is owned. */
async function ownerOf(store: Store, name: string): Promise<StreamOwner> {
  const { token } = await addOperator(store, name, NOW);
  const row = await new OperatorRepository(store).findByName(name);
  return { operatorId: row?.id ?? 0, tokenHash: tokenHash(token) };
}

/** A new client's first message (or its closing). */
async function joined(client: Collected): Promise<void> {
  await waitFor(() => client.messages.length > 0 || client.closed, 'the client joined');
}

storeTest('the renderer reads a flush set-based and renders what the operator routes return', async (t, store) => {
  const { parkingId, sessionId } = await seeded(store);
  const renderer = new StreamRenderer(store, new LiveBoxStates());
  const rendered = await renderer.render(
    {
      boxes: [9401, 9402, 9999],
      sessions: [sessionId, 424242],
      parkings: [parkingId, 77],
    },
    NOW,
  );
  const [parking] = await new BoxEntries(store).parkings(NOW);
  t.deepEqual(
    [...rendered.boxes.values()],
    (parking?.boxes ?? []).map((box) => ({ ...box, live: null })),
    'the boxes as GET /api/operator/parkings shows them, with live',
  );
  t.false(rendered.boxes.has(9999), 'a box no longer there renders nothing');
  t.deepEqual([...rendered.sessions.values()], await operatorSessions(store, { limit: 10 }));
  t.false(rendered.sessions.has(424242));
  t.deepEqual(rendered.forwarding.get(parkingId), [], 'a parking that forwards nowhere');
  t.deepEqual(rendered.forwarding.get(77), [], 'a parking no longer there');
  const snapshot = await renderer.snapshot(NOW);
  t.is(snapshot.parkings[0]?.boxes.length, 2);
  t.deepEqual(
    snapshot.sessions.map((session) => session.id),
    [sessionId],
  );
});

storeTest(
  'a client that joins while a flush reads gets its snapshot, then every event after it exactly once',
  async (t, store) => {
    const { sessionId } = await seeded(store);
    const { hub, renderer, stream, operator } = await streamOn(store);
    const first = sink();
    stream.add(first, undefined, operator);
    await joined(first);
    t.is(first.messages[0]?.event, 'snapshot');

    hub.publishBox(9401);
    renderer.held = true;
    const flushing = stream.flush();
    await waitFor(() => renderer.waiting > 0, 'the flush reading'); // its read held
    const second = sink();
    stream.add(second, undefined, operator); // joins meanwhile: its snapshot waits too
    hub.publishSession(sessionId); // arrives meanwhile
    renderer.release();
    await flushing;
    await joined(second);
    t.deepEqual(
      first.messages.map((message) => message.event),
      ['snapshot', 'boxes'],
      'the flush sent what came before it',
    );
    t.deepEqual(
      second.messages.map((message) => message.event),
      ['snapshot'],
    );

    await stream.flush();
    t.deepEqual(
      first.messages.map((message) => message.event),
      ['snapshot', 'boxes', 'sessions'],
      'the event that arrived during the read, at the next flush',
    );
    t.is(second.messages.at(-1)?.event, 'sessions', 'the new client gets it too: it came after its snapshot started');
    t.is(first.messages.at(-1)?.id, second.messages.at(-1)?.id, 'both at the same position');
    const ids = first.messages.map((message) => Number(message.id));
    t.deepEqual(
      ids,
      [...ids].sort((a, b) => a - b),
      'ids increase',
    );
  },
);

storeTest(
  'a client that leaves during a read is not written to; close during a read writes nothing',
  async (t, store) => {
    await seeded(store);
    const { hub, renderer, stream, operator } = await streamOn(store);
    const leaving = sink();
    const remove = stream.add(leaving, undefined, operator);
    await joined(leaving);
    hub.publishBox(9402);
    renderer.held = true;
    const flushing = stream.flush();
    remove();
    renderer.release();
    await flushing;
    t.deepEqual(
      leaving.messages.map((message) => message.event),
      ['snapshot'],
    );

    const staying = sink();
    stream.add(staying, undefined, operator);
    await joined(staying);
    hub.publishBox(9402);
    renderer.held = true;
    const closing = stream.flush();
    stream.close();
    renderer.release();
    await closing;
    t.deepEqual(
      staying.messages.map((message) => message.event),
      ['snapshot'],
    );
    t.true(staying.closed);
  },
);

storeTest('a read that fails sends nothing; the next flush sends it all', async (t, store) => {
  await seeded(store);
  const { hub, renderer, stream, errors, operator } = await streamOn(store);
  const client = sink();
  stream.add(client, undefined, operator);
  await joined(client);
  hub.publishBox(9401);
  renderer.failing = true;
  await stream.flush();
  t.is(client.messages.length, 1, 'nothing but the snapshot');
  t.is(errors.length, 1);
  hub.publishBox(9402);
  renderer.failing = false;
  await stream.flush();
  const boxes = client.messages.at(-1);
  t.is(boxes?.event, 'boxes');
  t.deepEqual(
    (JSON.parse(boxes?.data ?? '{}') as { boxes: { module_id: number }[] }).boxes.map((box) => box.module_id),
    [9401, 9402],
    "both boxes, the failed flush's one included",
  );

  // A snapshot that fails closes the new client (its EventSource comes back).
  renderer.failing = true;
  const refused = sink();
  stream.add(refused, undefined, operator);
  await joined(refused);
  t.true(refused.closed);
  t.deepEqual(refused.messages, []);
});

storeTest(
  "a removed operator's client is ended before the next flush sends it anything; another operator's client gets it",
  async (t, store) => {
    const { sessionId } = await seeded(store);
    const { hub, stream, operator } = await streamOn(store);
    const removed = sink();
    stream.add(removed, undefined, operator);
    const staying = sink();
    stream.add(staying, undefined, await ownerOf(store, 'other'));
    await joined(removed);
    await joined(staying);

    await removeOperator(store, 'bench');
    hub.publishSession(sessionId);
    await stream.flush();
    // The positive marker: the same flush sent the session to the other operator.
    t.deepEqual(
      staying.messages.map((message) => message.event),
      ['snapshot', 'sessions'],
    );
    t.true(removed.closed);
    t.deepEqual(
      removed.messages.map((message) => message.event),
      ['snapshot'],
      'nothing after the removal',
    );
    t.is(stream.counters.revoked, 1);
    t.is(stream.counters.clients, 1);
  },
);

storeTest(
  'a quiet client is ended within OWNER_CHECK_MS once its token is replaced; a joining one whose operator goes during its snapshot gets nothing',
  async (t, store) => {
    await seeded(store);
    const { clock, renderer, stream, operator } = await streamOn(store);
    const quiet = sink();
    stream.add(quiet, undefined, operator);
    await joined(quiet);
    await stream.flush(); // checks its owner (the first flush does), nothing to send
    await ensureOperator(store, 'bench', NOW); // a new token: the stream's is void
    clock.advance(OWNER_CHECK_MS - 1);
    await stream.flush();
    t.false(quiet.closed, 'nothing to send and the check not due yet');
    clock.advance(1);
    await stream.flush();
    t.true(quiet.closed, 'the check due: ended');
    t.deepEqual(
      quiet.messages.map((message) => message.event),
      ['snapshot'],
    );

    const other = await ownerOf(store, 'other');
    const joining = sink();
    renderer.held = true;
    stream.add(joining, undefined, other);
    await waitFor(() => renderer.waiting > 0, 'the snapshot being read');
    await removeOperator(store, 'other');
    renderer.release();
    await waitFor(() => joining.closed, 'the joining client ended');
    t.deepEqual(joining.messages, [], 'not even its snapshot');
    t.is(stream.counters.revoked, 2);
  },
);

storeTest(
  'the snapshot holds the newest 200 sessions of the day, with how many there are and whether it was cut',
  async (t, store) => {
    const parkingId = await insertParking(store, { created_at: NOW });
    const renderer = new StreamRenderer(store, new LiveBoxStates());
    const dayStart = Math.floor(NOW / 86_400_000) * 86_400_000;
    const session = async (startTime: number, state: 'entering' | 'finished') =>
      insertSession(store, { userId: await insertUser(store, NOW), parkingId, startTime, state });
    await session(dayStart - 3_600_000, 'finished'); // yesterday's, ended: not of the day
    const openSinceYesterday = await session(dayStart - 3_600_000, 'entering');
    const today = [await session(dayStart, 'finished'), await session(NOW, 'entering')];
    const small = await renderer.snapshot(NOW);
    t.deepEqual(
      small.sessions.map((item) => item.id),
      [...today].reverse().concat(openSinceYesterday),
      'newest first, the open one of yesterday last',
    );
    t.is(small.sessions_total, 3);
    t.false(small.sessions_truncated);

    for (let n = 0; n < 200; n += 1) today.push(await session(NOW + 1_000 + n, 'finished'));
    const cut = await renderer.snapshot(NOW + 10_000);
    t.is(cut.sessions.length, SNAPSHOT_SESSIONS);
    t.is(cut.sessions_total, 203);
    t.true(cut.sessions_truncated);
    t.deepEqual(
      cut.sessions.map((item) => item.id),
      today.slice(-200).reverse(),
      "the newest 200 of today's",
    );
  },
);
