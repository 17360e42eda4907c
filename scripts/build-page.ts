// `npm run build:page`, and part of `npm run build` (build.ts): bundles the
// bench page (web/bench/src) with esbuild into dist/web/bench, git-ignored
// with the rest of dist/: index.html plus content-hashed assets/ (one JS
// bundle, one CSS file holding uPlot's stylesheet and ours). Nothing is built
// at run time and the HTML has no inline script, so the page's
// Content-Security-Policy allows scripts from the page's own origin only
// (api/bench-page/routes.ts).
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const web = fileURLToPath(new URL('../web/bench/', import.meta.url));
const out = fileURLToPath(new URL('../dist/web/bench/', import.meta.url));
const assets = join(out, 'assets');

/** Escapes what could end an attribute of the HTML template (asset names are ours, but say so). */
const attribute = (text: string): string => text.replace(/[&"<>]/g, (c) => `&#${c.charCodeAt(0)};`);

export async function buildPage(): Promise<{ script: string; style: string }> {
  await rm(out, { recursive: true, force: true });
  await mkdir(assets, { recursive: true });
  const result = await build({
    entryPoints: [join(web, 'src', 'main.tsx')],
    outdir: assets,
    entryNames: '[name]-[hash]',
    bundle: true,
    minify: true,
    sourcemap: 'linked',
    format: 'esm',
    target: ['es2022', 'chrome110', 'firefox115', 'safari16'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    metafile: true,
    logLevel: 'warning',
    legalComments: 'linked',
  });
  const outputs = Object.keys(result.metafile.outputs).map((path) => basename(path));
  const script = outputs.find((name) => name.endsWith('.js'));
  const style = outputs.find((name) => name.endsWith('.css'));
  if (script === undefined || style === undefined)
    throw new Error(`esbuild wrote no JS or no CSS: ${outputs.join(', ')}`);
  const template = await readFile(join(web, 'index.html'), 'utf8');
  const html = template
    .replace('%SCRIPT%', `/bench/assets/${attribute(script)}`)
    .replace('%STYLE%', `/bench/assets/${attribute(style)}`);
  await writeFile(join(out, 'index.html'), html);
  return { script, style };
}

// Run as `npm run build:page`; build.ts imports buildPage.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { script, style } = await buildPage();
  process.stdout.write(`bench page built: dist/web/bench/index.html, assets/${script}, assets/${style}\n`);
}
