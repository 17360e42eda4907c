// Serving the bench page: GET /bench and /bench/assets/... with its
// Content-Security-Policy and cache headers, a 503 (never a 500) while the
// page is not built, and nothing of it in the OpenAPI document.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import Fastify from 'fastify';
import { BENCH_PAGE_CSP, benchPageRoutes } from '../../../api/bench-page/routes.js';
import { tempDir, testApp } from '../../helpers/api-app.js';

async function pageApp(root: string) {
  const app = Fastify();
  await benchPageRoutes(app, { root });
  await app.ready();
  return app;
}

test('a page not built: /bench and its assets answer 503 page_not_built, saying to run npm run build', async (t) => {
  const app = await pageApp(join(tempDir(t), 'nothing-here'));
  t.teardown(() => app.close());
  for (const url of ['/bench', '/bench/assets/main-ABC.js']) {
    const response = await app.inject({ method: 'GET', url });
    t.is(response.statusCode, 503, url);
    t.like(response.json(), { error: 'page_not_built' });
    t.regex(response.json<{ message: string }>().message, /npm run build\b/);
  }
});

test('a built page: the HTML with the CSP, nosniff and no-cache; hashed assets immutable; an unknown asset 404', async (t) => {
  const root = tempDir(t);
  await mkdir(join(root, 'assets'));
  await writeFile(
    join(root, 'index.html'),
    '<!doctype html><script type="module" src="/bench/assets/main-X1.js"></script>',
  );
  await writeFile(join(root, 'assets', 'main-X1.js'), 'export {};');
  await writeFile(join(root, 'assets', 'main-X1.css'), 'body{}');
  const app = await pageApp(root);
  t.teardown(() => app.close());

  const page = await app.inject({ method: 'GET', url: '/bench' });
  t.is(page.statusCode, 200);
  t.regex(String(page.headers['content-type']), /^text\/html/);
  t.is(page.headers['content-security-policy'], BENCH_PAGE_CSP);
  t.regex(BENCH_PAGE_CSP, /script-src 'self';/);
  t.notRegex(BENCH_PAGE_CSP, /unsafe-inline|unsafe-eval/);
  t.is(page.headers['x-content-type-options'], 'nosniff');
  t.is(page.headers['cache-control'], 'no-cache');

  const script = await app.inject({ method: 'GET', url: '/bench/assets/main-X1.js' });
  t.is(script.statusCode, 200);
  t.regex(String(script.headers['content-type']), /javascript/);
  t.is(script.headers['x-content-type-options'], 'nosniff');
  t.regex(String(script.headers['cache-control']), /max-age=31536000.*immutable/);
  const style = await app.inject({ method: 'GET', url: '/bench/assets/main-X1.css' });
  t.regex(String(style.headers['content-type']), /^text\/css/);

  t.is((await app.inject({ method: 'GET', url: '/bench/assets/nothing.js' })).statusCode, 404);
  t.is((await app.inject({ method: 'GET', url: '/bench/assets/../index.html' })).statusCode, 404);
  const slash = await app.inject({ method: 'GET', url: '/bench/' });
  t.is(slash.statusCode, 308);
  t.is(slash.headers.location, '/bench');
});

test('the API serves /bench (what npm install built), not in the OpenAPI document', async (t) => {
  const { app } = await testApp(t);
  const page = await app.inject({ method: 'GET', url: '/bench' });
  // 200 once built (npm install / npm ci run the build), else the 503 that says how.
  t.true(page.statusCode === 200 || page.statusCode === 503, String(page.statusCode));
  if (page.statusCode === 200) {
    t.is(page.headers['content-security-policy'], BENCH_PAGE_CSP);
    const asset = /src="(\/bench\/assets\/[^"]+\.js)"/.exec(page.body)?.[1];
    t.truthy(asset, 'the HTML names its bundle');
    t.is((await app.inject({ method: 'GET', url: asset ?? '' })).statusCode, 200);
    t.notRegex(page.body, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script');
  } else {
    t.like(page.json(), { error: 'page_not_built' });
  }
  const openapi = (await app.inject({ method: 'GET', url: '/openapi.json' })).json<{
    paths: Record<string, unknown>;
  }>();
  t.false(Object.keys(openapi.paths).some((path) => path.startsWith('/bench')));
});
