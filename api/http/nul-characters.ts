// No text the API takes may hold U+0000. PostgreSQL's text cannot store it
// (the insert fails: a 500 for what is the client's mistake) and SQLite
// would store it where every reader in C stops at it; no field of the API
// means anything by it. So a request whose body, query string or path
// parameters hold a NUL in any string, or any object key, is refused
// with a 422 naming where, on both engines alike: after the route's schema
// (whose own detail, such as "must be printable text", comes first and
// lists every bad field), before its handler, for what the schema let by.
//
// Cost: walking every value of a 50-log batch took 9% of the box-log
// route's rate (perf:api). JSON text can hold a NUL only as the escape
// \u0000 (a raw control character is invalid JSON), so a JSON body is
// parsed by fastify's own parser and walked only when its text holds that
// escape; form bodies, query strings and path parameters (small) always are.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from './errors.js';
import { dottedPath } from './error-handler.js';

/** Requests whose JSON text held no `\u0000`: their body needs no walk. */
const cleanJson = new WeakSet<FastifyRequest>();

/** fastify's JSON parser, noting clean bodies, and the preHandler hook:
 * every route, the payment form included. Registered before the routes. */
export function refuseNulCharacters(app: FastifyInstance): void {
  const { onProtoPoisoning, onConstructorPoisoning } = app.initialConfig;
  const parseJson = app.getDefaultJsonParser(onProtoPoisoning ?? 'error', onConstructorPoisoning ?? 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (!(body as string).includes('\\u0000')) cleanJson.add(request);
    void parseJson(request, body as string, done);
  });
  app.addHook('preHandler', (request, _reply, done) => {
    const path =
      (cleanJson.has(request) ? undefined : nulPath(request.body)) ??
      nulPath(request.query) ??
      nulPath(namedParameters(request.params));
    done(
      path === undefined
        ? undefined
        : new ApiError('validation_failed', undefined, [
            { path, message: 'must not contain the NUL character (U+0000)' },
          ]),
    );
  });
}

/** Path parameters but a wildcard's: /docs/static/* serves files, and
 * @fastify/static answers a path with a NUL 404 as for any file it does
 * not have (docs/api.md). */
function namedParameters(params: unknown): unknown {
  if (typeof params !== 'object' || params === null || !('*' in params)) return params;
  const { '*': _wildcard, ...named } = params as Record<string, unknown>;
  return named;
}

interface Visit {
  value: unknown;
  key: string;
  parent: Visit | undefined;
}

/** Where the first string or key holding U+0000 is (dotted as validation
 * details are), or undefined. Walked with a stack, not recursion: a body of
 * a million nested arrays is valid JSON under the size limit. */
export function nulPath(root: unknown): string | undefined {
  if (typeof root === 'string') return root.includes('\0') ? '$' : undefined;
  if (typeof root !== 'object' || root === null) return undefined;
  const stack: Visit[] = [{ value: root, key: '', parent: undefined }];
  for (let visit = stack.pop(); visit !== undefined; visit = stack.pop()) {
    const { value } = visit;
    if (typeof value === 'string') {
      if (value.includes('\0')) return pathOf(visit);
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
        const child: Visit = { value: item, key, parent: visit };
        if (key.includes('\0')) return pathOf(child);
        stack.push(child);
      }
    }
  }
  return undefined;
}

function pathOf(visit: Visit): string {
  const keys: string[] = [];
  for (let at = visit; at.parent !== undefined; at = at.parent) keys.push(at.key);
  keys.reverse();
  // dottedPath reads ajv's JSON pointer ("/a/0/b"): escape as one.
  return dottedPath(keys.map((key) => `/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`).join(''));
}
