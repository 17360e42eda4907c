// The NOTIFY payloads of the relay between API processes
// (api/events/relay-message.ts): a batch of any size in parts under
// PostgreSQL's 8,000-byte limit, any text cut anywhere and put back exactly,
// and a receiver that drops what it cannot trust instead of pushing it.
import test from 'ava';
import {
  BatchAssembler,
  MAX_PART_CHARS,
  MAX_PARTS,
  emptyBatch,
  encodeBatch,
  type RelayBatch,
} from '../../../api/events/relay-message.js';

const NOTIFY_PAYLOAD_LIMIT = 8_000;

function bigBatch(): RelayBatch {
  const batch = emptyBatch();
  for (let id = 1; id <= 5_000; id++) batch.box_logs.push(1_000_000 + id);
  batch.boxes.push(9101, 9102);
  batch.sessions.push(7);
  batch.forwarding.push(1);
  batch.control.push({
    module_id: 9101,
    operation_id: 'op-ünïcödé-🚗',
    kind: 'REVOKE',
    outcome: 'failed',
    status: 'REVOCATION_FULL',
    at: '2026-11-27T12:00:00.000Z',
  });
  batch.conformance.push({
    id: 'run-1',
    cases: Array.from({ length: 60 }, (_, index) => ({ name: `case ${index} – é` })),
  } as never);
  batch.runs.push({ id: 'kept-1', labels: { firmware: 'ünï' }, results: [{ name: 'a' }] } as never);
  return batch;
}

test('a batch of any size goes in parts under the payload limit, ASCII only, and comes back equal', (t) => {
  const batch = bigBatch();
  const payloads = encodeBatch('a1b2c3', 42, batch);
  t.true(payloads.length > 1, 'several parts');
  for (const payload of payloads) {
    t.true(Buffer.byteLength(payload, 'utf8') < NOTIFY_PAYLOAD_LIMIT);
    t.true(payload.length <= MAX_PART_CHARS + 50);
    t.regex(payload, /^[\x20-\x7e]*$/, 'ASCII: a cut never splits a character');
  }
  const assembler = new BatchAssembler();
  const results = payloads.map((payload) => assembler.accept(payload));
  t.true(results.slice(0, -1).every((result) => result.kind === 'partial'));
  t.deepEqual(results.at(-1), { kind: 'batch', origin: 'a1b2c3', batch });
});

test('an empty batch is one part; the parts of two origins may interleave', (t) => {
  const first = encodeBatch('one', 1, bigBatch());
  const second = encodeBatch('two', 1, { ...emptyBatch(), sessions: [3] });
  t.is(second.length, 1);
  const assembler = new BatchAssembler();
  const [head, ...rest] = first;
  t.is(assembler.accept(head ?? '').kind, 'partial');
  t.deepEqual(assembler.accept(second[0] ?? ''), {
    kind: 'batch',
    origin: 'two',
    batch: { ...emptyBatch(), sessions: [3] },
  });
  const results = rest.map((payload) => assembler.accept(payload));
  t.is(results.at(-1)?.kind, 'batch');
});

test('a part missing, repeated or of another batch drops the batch; the next one assembles', (t) => {
  const payloads = encodeBatch('origin', 1, bigBatch());
  const assembler = new BatchAssembler();
  t.is(assembler.accept(payloads[0] ?? '').kind, 'partial');
  t.like(assembler.accept(payloads[2] ?? ''), { kind: 'invalid' }, 'part 3 after part 1');
  t.like(assembler.accept(payloads[1] ?? ''), { kind: 'invalid' }, 'what follows a dropped batch');

  const other = encodeBatch('origin', 2, bigBatch());
  t.is(assembler.accept(payloads[0] ?? '').kind, 'partial');
  t.like(assembler.accept(other[1] ?? ''), { kind: 'invalid' }, 'part 2 of another batch');
  for (const [index, payload] of other.entries()) {
    const result = assembler.accept(payload);
    t.is(result.kind, index === other.length - 1 ? 'batch' : 'partial');
  }
});

test('what is not a batch is refused with a reason, never pushed', (t) => {
  const assembler = new BatchAssembler();
  const refused = [
    '',
    'no header at all',
    'origin 1 0/1 {}',
    'origin 1 2/1 {}',
    `origin 1 1/${MAX_PARTS + 1} {}`,
    'origin 1 1/1 not json',
    'origin 1 1/1 null',
    'origin 1 1/1 {}',
    `origin 1 1/1 ${JSON.stringify({ ...emptyBatch(), box_logs: ['1'] })}`,
    `origin 1 1/1 ${JSON.stringify({ ...emptyBatch(), box_logs: [-1] })}`,
    `origin 1 1/1 ${JSON.stringify({ ...emptyBatch(), sessions: [1.5] })}`,
    `origin 1 1/1 ${JSON.stringify({ ...emptyBatch(), control: [{ module_id: 'x', operation_id: 'y' }] })}`,
    `origin 1 1/1 ${JSON.stringify({ ...emptyBatch(), conformance: [{ id: null }] })}`,
    `origin 1 1/1 ${JSON.stringify({ ...emptyBatch(), runs: [{ id: 7 }] })}`,
    `origin 1 1/1 ${JSON.stringify({ ...emptyBatch(), runs: 'kept-1' })}`,
    `origin 1 1/1 ${JSON.stringify({ ...emptyBatch(), boxes: 5 })}`,
  ];
  for (const payload of refused) t.like(assembler.accept(payload), { kind: 'invalid' }, payload.slice(0, 60));
});

test('a batch without kept runs (from a process that publishes none) assembles with none', (t) => {
  const { runs: _runs, ...older } = emptyBatch();
  const result = new BatchAssembler().accept(`origin 1 1/1 ${JSON.stringify({ ...older, boxes: [9101] })}`);
  t.deepEqual(result, { kind: 'batch', origin: 'origin', batch: { ...emptyBatch(), boxes: [9101] } });
});
