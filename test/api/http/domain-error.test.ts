// The one mapping of the domain's refusals to the registry
// (api/error-handler.ts domainApiError): the kind's code unless the error
// carries one, its problems as details or its message on the route's field,
// Retry-After in whole seconds, and a `failed` one left to the 500 path.
import test from 'ava';
import { BoxLogRefusal } from '../../../api/box-logs/errors.js';
import { conflict, failed, notFound, refused, type DomainError } from '../../../api/http/domain-error.js';
import { domainApiError } from '../../../api/http/error-handler.js';
import { SessionCreateLimited, SessionError } from '../../../api/sessions/errors.js';

const answer = (error: DomainError, field?: string) => {
  const api = domainApiError(error, field);
  return api && { status: api.status, headers: api.headers, body: api.body() };
};

test('each kind: 404 resource_not_found, 409 operation_refused, failed left to the 500 path', (t) => {
  t.deepEqual(answer(notFound('no parking 7'), 'id'), {
    status: 404,
    headers: {},
    body: {
      error: 'resource_not_found',
      message: 'No such resource; details name the id.',
      details: [{ path: 'id', message: 'no parking 7' }],
    },
  });
  t.like(answer(conflict('taken'), 'module_id'), { status: 409, body: { error: 'operation_refused' } });
  t.like(answer(refused('held'), 'run_id'), {
    status: 409,
    body: { error: 'operation_refused', details: [{ path: 'run_id', message: 'held' }] },
  });
  t.is(answer(failed('not written'), 'id'), undefined);
});

test('a refusal of a route that names no field is about the request itself ($)', (t) => {
  t.like(answer(notFound('no such thing')), { body: { details: [{ path: '$', message: 'no such thing' }] } });
});

test('the code, problems and summary an error carries win over its kind and the route field', (t) => {
  t.deepEqual(answer(new SessionError('refused', 'session', ['already finished', 'and paid']), 'ignored'), {
    status: 422,
    headers: {},
    body: {
      error: 'session_finished',
      message: 'The parking session is already finished or finalized.',
      details: [
        { path: 'id', message: 'already finished' },
        { path: 'id', message: 'and paid' },
      ],
    },
  });
  t.like(answer(new SessionError('refused', 'parking', ['inactive'])), {
    status: 422,
    body: { error: 'session_refused', details: [{ path: 'parking_session.secured_parking_id', message: 'inactive' }] },
  });
  const missing = [{ path: 'box_logs[0].box_log.equipment_id', message: 'no box 9' }];
  t.like(answer(new BoxLogRefusal('not_found', missing)), {
    status: 404,
    body: { error: 'resource_not_found', message: 'An id in the box logs does not exist; details name it.' },
  });
  t.like(answer(new BoxLogRefusal('refused', missing)), { status: 422, body: { error: 'validation_failed' } });
});

test('Retry-After: whole seconds rounded up, at least 1', (t) => {
  const limits = { burst: 3, intervalMs: 20_000 };
  t.deepEqual(answer(new SessionCreateLimited(1, limits))?.headers, { 'Retry-After': '1' });
  t.deepEqual(answer(new SessionCreateLimited(19_001, limits))?.headers, { 'Retry-After': '20' });
  t.like(answer(new SessionCreateLimited(5_000, limits)), {
    status: 429,
    body: { error: 'too_many_sessions', details: [{ path: 'parking_session' }] },
  });
});
