// The bench page: `GET /bench` and its built assets under
// `/bench/assets/`, from dist/web/bench, which `npm run build` writes
// (`npm install` runs it: nothing is built here, at run time). No auth to load
// them: the page asks for an operator token and calls /api/operator/... with
// it. Not in the OpenAPI document (a page, not an API).
//
// Content-Security-Policy: the page is one ES module bundle and one
// stylesheet from this origin; its only calls are fetch and EventSource to
// this origin. No inline script or style, no frame, no plugin, no other
// origin. `img-src data:` is the favicon (`data:,`, so the browser asks for
// no /favicon.ico).
import { constants } from 'node:fs';
import { access, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { ApiError } from '../http/errors.js';

export const BENCH_PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** dist/web/bench of this package, where scripts/build-page.ts writes the page: from the compiled
 * file (dist/api/bench-page/routes.js) two folders up, from its source run by tsx
 * (api/bench-page/routes.ts) two folders up and into dist/. */
export const DEFAULT_BENCH_PAGE_ROOT = fileURLToPath(
  new URL(import.meta.url.endsWith('.js') ? '../../web/bench/' : '../../dist/web/bench/', import.meta.url),
);

export interface BenchPageOptions {
  /** The built page: index.html and assets/ (tests give a folder of their own). */
  root?: string;
}

function secure(reply: FastifyReply): FastifyReply {
  return reply
    .header('content-security-policy', BENCH_PAGE_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer');
}

function notBuilt(reply: FastifyReply): FastifyReply {
  return reply.status(503).send(new ApiError('page_not_built').body());
}

const isMissing = (error: unknown): boolean =>
  typeof error === 'object' && error !== null && 'code' in error && error.code === 'ENOENT';

export async function benchPageRoutes(app: FastifyInstance, options: BenchPageOptions = {}): Promise<void> {
  const root = options.root ?? DEFAULT_BENCH_PAGE_ROOT;
  const indexPath = join(root, 'index.html');

  app.get('/bench', { schema: { hide: true } }, async (_request, reply) => {
    let html: Buffer;
    try {
      html = await readFile(indexPath);
    } catch (error) {
      if (isMissing(error)) return notBuilt(reply);
      throw error;
    }
    // The HTML names the hashed assets of the current build: asked again each time.
    return secure(reply).header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(html);
  });
  // `/bench/` too (a fragment, `#token=...`, survives the redirect in the browser).
  app.get('/bench/', { schema: { hide: true } }, (_request, reply) => reply.redirect('/bench', 308));

  await app.register(async (scope) => {
    scope.addHook('onRequest', async (_request, reply) => {
      try {
        await access(indexPath, constants.R_OK);
      } catch {
        return notBuilt(reply);
      }
      return undefined;
    });
    await scope.register(fastifyStatic, {
      root: join(root, 'assets'),
      prefix: '/bench/assets/',
      decorateReply: false,
      index: false,
      serveDotFiles: false,
      // Every asset name carries a hash of its content (esbuild's [name]-[hash]).
      immutable: true,
      maxAge: '365d',
      setHeaders: (reply) => {
        secure(reply);
      },
    });
  });
}
