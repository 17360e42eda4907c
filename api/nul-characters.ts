// No text the API takes may hold U+0000. PostgreSQL's text cannot store it
// (the insert fails: a 500 for what is the client's mistake) and SQLite
// would store it where every reader in C stops at it; no field of the API
// means anything by it. So a request whose body, query string or path
// parameters hold a NUL in any string, or any object key, is refused
// before validation with a 422 naming where, on both engines alike.
import type { FastifyRequest } from 'fastify';
import { ApiError } from './errors.js';
import { dottedPath } from './error-handler.js';

/** fastify's preValidation hook (app.ts): every route, the payment form included. */
export function refuseNulCharacters(request: FastifyRequest, _reply: unknown, done: (error?: Error) => void): void {
  const path = nulPath(request.body) ?? nulPath(request.query) ?? nulPath(request.params);
  done(
    path === undefined
      ? undefined
      : new ApiError('validation_failed', undefined, [
          { path, message: 'must not contain the NUL character (U+0000)' },
        ]),
  );
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
