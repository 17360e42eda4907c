// The body schema the OpenAPI document shows for POST /api/box_logs and POST
// /api/car_driver/parking_sessions is the one that validates: a
// field added to the route's schema appears in the document AND is
// enforced, with the route's 400-versus-422 rule. The schemas are changed
// before the app is built, in this file's own worker process.
import test from 'ava';
import { errorBody, loggedIn, testApp } from '../../helpers/api-app.js';
import { boxLog, countRows, postBoxLogs } from '../../helpers/box-logs.js';
import { createSession, seedParking } from '../../helpers/parking.js';
import { boxLogSchema } from '../../../api/box-logs/validate.js';
import { createSessionBodySchema } from '../../../api/sessions/routes.js';

interface ObjectSchema {
  required: string[];
  properties: Record<string, unknown>;
}

function addRequiredField(schema: unknown, field: string, fieldSchema: unknown): void {
  const object = schema as ObjectSchema;
  object.required.push(field);
  object.properties[field] = fieldSchema;
}

addRequiredField(boxLogSchema, 'lane', { type: 'string', enum: ['A', 'B'] });
addRequiredField(createSessionBodySchema.properties.parking_session, 'plate', { type: 'string' });

type Json = Record<string, unknown>;

/** The request body schema of a route in the served OpenAPI document. */
async function documentedBody(app: Awaited<ReturnType<typeof testApp>>, path: string): Promise<Json> {
  const document = (await app.app.inject({ method: 'GET', url: '/openapi.json' })).json<{
    paths: Record<string, Json>;
  }>();
  const post = document.paths[path]?.post as { requestBody: { content: Record<string, { schema: Json }> } };
  return post.requestBody.content['application/json']?.schema as Json;
}

const at = (schema: unknown, ...keys: string[]): Json =>
  keys.reduce<Json>((value, key) => value[key] as Json, schema as Json);

test('box logs: a field added to the schema is documented and enforced (422 naming it), and the documented batch limit is the enforced one', async (t) => {
  const app = await testApp(t, { tokenTtlSeconds: 86_400, boxLogsMaxBatch: 2 });
  const tokens = await loggedIn(app);
  const parking = await seedParking(app);
  const body = await documentedBody(app, '/api/box_logs');
  const documentedLog = at(body, 'properties', 'box_logs', 'items', 'properties', 'box_log');
  t.true((documentedLog.required as string[]).includes('lane'));
  t.deepEqual(at(documentedLog, 'properties', 'lane'), { type: 'string', enum: ['A', 'B'] });
  t.is(at(body, 'properties', 'box_logs').maxItems, 2);

  const log = (lane?: unknown) => {
    const element = boxLog({
      foUserId: 1,
      smartKeyId: null,
      box: parking.entrance,
      parkingId: parking.id,
      command: null,
      response: null,
    });
    return lane === undefined ? element : { box_log: { ...element.box_log, lane } };
  };
  const cases: [unknown, string[]][] = [
    [undefined, ['is required']],
    ['C', ['must be one of A, B']],
    [1, ['must be of type string', 'must be one of A, B']],
  ];
  for (const [lane, messages] of cases) {
    const response = await postBoxLogs(app, tokens.access_token, { box_logs: [log(lane)] });
    t.is(response.statusCode, 422, String(lane));
    t.deepEqual(
      errorBody(t, response).details,
      messages.map((message) => ({ path: 'box_logs[0].box_log.lane', message })),
    );
  }
  const tooMany = await postBoxLogs(app, tokens.access_token, { box_logs: [log('A'), log('A'), log('A')] });
  t.is(tooMany.statusCode, 422);
  t.deepEqual(errorBody(t, tooMany).details, [{ path: 'box_logs', message: 'must have at most 2 elements' }]);
  t.is(await countRows(app, 'box_logs'), 0);
  const accepted = await postBoxLogs(app, tokens.access_token, { box_logs: [log('A'), log('B')] });
  t.is(accepted.statusCode, 201, accepted.body);
});

test('parking sessions: a field added to the schema is documented and enforced: 400 when missing or null, 422 when of the wrong type', async (t) => {
  const app = await testApp(t);
  const tokens = await loggedIn(app);
  const parking = await seedParking(app);
  const documented = at(await documentedBody(app, '/api/car_driver/parking_sessions'), 'properties', 'parking_session');
  t.deepEqual(documented.required, ['secured_parking_id', 'plate']);
  t.deepEqual(at(documented, 'properties', 'plate'), { type: 'string' });

  for (const plate of [undefined, null]) {
    const response = await createSession(app, tokens.access_token, {
      parking_session: { secured_parking_id: parking.id, plate },
    });
    t.is(response.statusCode, 400, String(plate));
    const error = errorBody(t, response);
    t.is(error.error, 'missing_parameter');
    t.deepEqual(error.details, [{ path: 'parking_session.plate', message: 'is required' }]);
  }
  const wrongType = await createSession(app, tokens.access_token, {
    parking_session: { secured_parking_id: parking.id, plate: 7 },
  });
  t.is(wrongType.statusCode, 422);
  t.is(errorBody(t, wrongType).error, 'validation_failed');
  t.deepEqual(errorBody(t, wrongType).details, [{ path: 'parking_session.plate', message: 'must be of type string' }]);
  const created = await createSession(app, tokens.access_token, {
    parking_session: { secured_parking_id: parking.id, plate: 'AB-123-CD' },
  });
  t.is(created.statusCode, 201, created.body);
});
