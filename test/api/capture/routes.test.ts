// GET /api/operator/boxes/:module_id/capture: the real service with its
// embedded broker and a simulated box on it (test/helpers/control-bench.ts);
// the capture read back with test/helpers/pcapng.ts, which shares no code
// with the writer but the record header's decoder.
import test from 'ava';
import type { LightMyRequestResponse } from 'fastify';
import { addOperator } from '../../../api/operators/accounts.js';
import { CaptureDirection, RecordKind } from '../../../lib/capture/record.js';
import { errorBody, testApp, type TestApp } from '../../helpers/api-app.js';
import { addParking, controlApp, startBox } from '../../helpers/control-bench.js';
import { sendCommand, untilSubscribed } from '../../helpers/operator-box.js';
import { readCapture, type CaptureContents } from '../../helpers/pcapng.js';
import { one } from '../../helpers/sql.js';

function capture(app: TestApp, token: string, moduleId: number | string, query = ''): Promise<LightMyRequestResponse> {
  return app.app.inject({
    method: 'GET',
    url: `/api/operator/boxes/${moduleId}/capture${query}`,
    headers: { authorization: `Bearer ${token}` },
  });
}

function contentsOf(
  t: { is: (a: unknown, b: unknown, m?: string) => void },
  response: LightMyRequestResponse,
): CaptureContents {
  t.is(response.statusCode, 200, response.body);
  return readCapture(response.rawPayload);
}

/** The frames of a capture, as [direction, base64]. */
function framesOf(contents: CaptureContents): [number, string][] {
  return contents.packets.flatMap(({ record }) =>
    record?.kind === RecordKind.frame
      ? [[record.direction, Buffer.from(record.data).toString('base64')] as [number, string]]
      : [],
  );
}

/** One BATTERY_QUERY through the operator API, answered; its box log's command and response. */
async function batteryQuery(
  app: TestApp,
  token: string,
  moduleId: number,
): Promise<{ command: string; response: string }> {
  const answer = await sendCommand(app, token, moduleId, { command: 'battery_query' });
  if (answer.statusCode !== 200) throw new Error(`battery_query: ${answer.body}`);
  const log = await one<{ command: string; response: string }>(
    app.ctx.store,
    'SELECT command, response FROM box_logs WHERE id = ?',
    answer.json<{ box_log_id: number }>().box_log_id,
  );
  if (log === undefined) throw new Error('battery_query: no box log');
  return log;
}

test("a command and its answer are in the box's capture, message then frame each way, and not in another box's", async (t) => {
  const app = await controlApp(t);
  const { token } = await addOperator(app.ctx.store, 'bench', app.clock.now());
  const parking = await addParking(app);
  const [moduleId = 0, otherId = 0] = parking.moduleIds;
  const { box } = await startBox(t, app, moduleId);
  await untilSubscribed(app, token, moduleId, box);
  const log = await batteryQuery(app, token, moduleId);

  const response = await capture(app, token, moduleId);
  const contents = contentsOf(t, response);
  t.is(response.headers['content-type'], 'application/pcapng');
  t.regex(
    String(response.headers['content-disposition']),
    new RegExp(`^attachment; filename="box-${moduleId}-\\d{8}T\\d{6}Z\\.pcapng"$`),
  );
  t.regex(contents.application ?? '', /^parkbench \S+ api$/);
  t.deepEqual(
    contents.interfaces.map(({ name, description, linkType }) => [name, description, linkType]),
    [[`mqtt:${app.mqtt?.url ?? ''}`, 'parkbench api', 147]],
  );
  t.false(contents.truncated);
  for (const { record } of contents.packets) t.like(record, { link: 3, moduleId, notAFrame: false });
  const frames = framesOf(contents);
  // The last command and its answer close the capture, in that order.
  t.deepEqual(frames.slice(-2), [
    [CaptureDirection.toBox, log.command],
    [CaptureDirection.fromBox, log.response],
  ]);
  const lastFour = contents.packets.slice(-4).map(({ record }) => [record?.direction, record?.kind]);
  t.deepEqual(lastFour, [
    [CaptureDirection.toBox, RecordKind.message],
    [CaptureDirection.toBox, RecordKind.frame],
    [CaptureDirection.fromBox, RecordKind.message],
    [CaptureDirection.fromBox, RecordKind.frame],
  ]);
  // The message records hold the topic, then the JSON as published.
  const [commandMessage, , responseMessage] = contents.packets
    .slice(-4)
    .map(({ record }) => Buffer.from(record?.data ?? []));
  const topicOf = (data: Buffer | undefined): string => data?.subarray(2, 2 + data.readUInt16BE(0)).toString() ?? '';
  t.is(topicOf(commandMessage), `parkbench/boxes/${moduleId}/command`);
  t.is(topicOf(responseMessage), `parkbench/boxes/${moduleId}/response`);
  const commandJson = JSON.parse(commandMessage?.subarray(2 + commandMessage.readUInt16BE(0)).toString() ?? '{}') as {
    command: string;
  };
  t.is(commandJson.command, log.command);

  // Another box of the parking: a capture with its section and interface, no packet.
  const other = contentsOf(t, await capture(app, token, otherId));
  t.is(other.interfaces.length, 1);
  t.deepEqual(other.packets, []);
});

test('seconds keeps the last N seconds; records older than CAPTURE_RING_SECONDS are gone, stepped on the clock', async (t) => {
  const app = await controlApp(t, { config: { captureRingSeconds: 300 } });
  const { token } = await addOperator(app.ctx.store, 'bench', app.clock.now());
  const parking = await addParking(app);
  const moduleId = parking.moduleIds[0] ?? 0;
  const { box } = await startBox(t, app, moduleId);
  await untilSubscribed(app, token, moduleId, box);
  const first = await batteryQuery(app, token, moduleId);
  app.clock.advance(100_000);
  const second = await batteryQuery(app, token, moduleId);
  const responsesIn = (contents: CaptureContents): string[] =>
    framesOf(contents).flatMap(([direction, frame]) => (direction === CaptureDirection.fromBox ? [frame] : []));

  const all = contentsOf(t, await capture(app, token, moduleId));
  t.deepEqual(responsesIn(all).slice(-2), [first.response, second.response]);
  const last50 = contentsOf(t, await capture(app, token, moduleId, '?seconds=50'));
  t.deepEqual(responsesIn(last50), [second.response]);
  t.is(last50.packets.length, 4);
  const last300 = contentsOf(t, await capture(app, token, moduleId, '?seconds=300'));
  t.deepEqual(responsesIn(last300).slice(-2), [first.response, second.response]);

  // 250 s later the first is 350 s old: gone, whatever seconds says.
  app.clock.advance(250_000);
  t.deepEqual(responsesIn(contentsOf(t, await capture(app, token, moduleId))), [second.response]);
  t.deepEqual(responsesIn(contentsOf(t, await capture(app, token, moduleId, '?seconds=300'))), [second.response]);
  // And past 300 s for the second too: a capture with no packet.
  app.clock.advance(50_001);
  const empty = contentsOf(t, await capture(app, token, moduleId));
  t.deepEqual(empty.packets, []);
  t.is(empty.interfaces.length, 1);
});

test('hostile input: seconds out of 1..CAPTURE_RING_SECONDS or not a number, a module id that is not one, 422 naming the field; an unknown box 404', async (t) => {
  const app = await controlApp(t, { config: { captureRingSeconds: 300 } });
  const { token } = await addOperator(app.ctx.store, 'bench', app.clock.now());
  const parking = await addParking(app);
  const moduleId = parking.moduleIds[0] ?? 0;
  for (const [id, query, field] of [
    [moduleId, '?seconds=0', 'seconds'],
    [moduleId, '?seconds=-1', 'seconds'],
    [moduleId, '?seconds=1e9', 'seconds'],
    [moduleId, '?seconds=abc', 'seconds'],
    [moduleId, '?seconds=301', 'seconds'],
    [moduleId, '?seconds=99999999999', 'seconds'],
    [moduleId, '?seconds=', 'seconds'],
    [moduleId, '?seconds=1.5', 'seconds'],
    [moduleId, '?seconds=10&seconds=20', 'seconds'],
    [moduleId, '?seconds=%2010', 'seconds'],
    ['x', '', 'module_id'],
    ['-1', '', 'module_id'],
    ['1e3', '', 'module_id'],
    ['99999999999', '', 'module_id'],
  ] as const) {
    const response = await capture(app, token, id, query);
    t.is(response.statusCode, 422, `${id}${query}: ${response.body}`);
    t.is(errorBody(t, response).details[0]?.path, field, `${id}${query}`);
  }
  t.is((await capture(app, token, moduleId, '?seconds=300')).statusCode, 200);
  const unknown = await capture(app, token, 4242);
  t.is(unknown.statusCode, 404);
  t.like(errorBody(t, unknown), {
    error: 'resource_not_found',
    details: [{ path: 'module_id', message: 'no box with module id 4242' }],
  });
});

test('CAPTURE_RING_SECONDS=0 turns the ring off (409); without MQTT there is nothing to capture (503)', async (t) => {
  const off = await controlApp(t, { config: { captureRingSeconds: 0 } });
  const { token } = await addOperator(off.ctx.store, 'bench', off.clock.now());
  const parking = await addParking(off);
  const moduleId = parking.moduleIds[0] ?? 0;
  const refused = await capture(off, token, moduleId);
  t.is(refused.statusCode, 409);
  t.like(errorBody(t, refused), { error: 'operation_refused', details: [{ path: 'module_id' }] });
  const seconds = await capture(off, token, moduleId, '?seconds=1');
  t.is(seconds.statusCode, 422);
  t.is(errorBody(t, seconds).details[0]?.path, 'seconds');

  const httpOnly = await testApp(t);
  const operator = await addOperator(httpOnly.ctx.store, 'bench', httpOnly.clock.now());
  const box = (await addParking(httpOnly)).moduleIds[0] ?? 0;
  const noMqtt = await capture(httpOnly, operator.token, box);
  t.is(noMqtt.statusCode, 503);
  t.is(errorBody(t, noMqtt).error, 'mqtt_unavailable');
});

test('the OpenAPI document shows the capture as a binary pcapng body under the operator tag', async (t) => {
  const app = await testApp(t);
  const document = (await app.app.inject({ method: 'GET', url: '/openapi.json' })).json<{
    paths: Record<
      string,
      { get?: { tags: string[]; responses: Record<string, { content?: Record<string, unknown> }> } }
    >;
  }>();
  const route = document.paths['/api/operator/boxes/{module_id}/capture']?.get;
  t.deepEqual(route?.tags, ['operator']);
  t.deepEqual(route?.responses['200']?.content, {
    'application/pcapng': { schema: { type: 'string', format: 'binary' } },
  });
  t.truthy(route?.responses['404']);
});
