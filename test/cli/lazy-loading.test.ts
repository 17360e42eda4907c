// The command line loads what a command runs when it runs (cli/README.md):
// `--help`, `protocol decode` and `admin box status` load no server (fastify,
// aedes), no PostgreSQL driver and no BLE stack. The compiled CLI runs with a
// module resolution hook that writes every URL it resolves; the packages are
// read from those URLs. `admin box status` loading the SQLite store is the
// proof that the hook sees what a command loads.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { FrameKind, sealCommand } from '../../firmware-protocol/index.js';
import { tempDir } from '../helpers/api-app.js';
import { boxKey } from '../helpers/protocol-fixtures.js';
import { runCli } from '../helpers/run-cli.js';

/** Appends every URL a module resolves to, one a line, to $PARKBENCH_IMPORTS_OUT (run in node's hooks thread). */
const HOOKS = `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  appendFileSync(process.env.PARKBENCH_IMPORTS_OUT, resolved.url + '\\n');
  return resolved;
}`;
const dataUrl = (source: string): string => `data:text/javascript,${encodeURIComponent(source)}`;
const REGISTER = dataUrl(`import { register } from 'node:module'; register(${JSON.stringify(dataUrl(HOOKS))});`);

/** What no light command may load: the HTTP server, the embedded broker, PostgreSQL's driver, BLE. */
const HEAVY = ['fastify', 'aedes', 'pg', '@abandonware/noble'];

/** Runs `parkbench ARGS` and returns the packages it loaded (by name, from node_modules). */
async function packagesLoadedBy(
  out: string,
  args: string[],
): Promise<{ code: number; stderr: string; packages: Set<string> }> {
  const result = await runCliWithHooks(out, args);
  const urls = (await readFile(out, 'utf8')).split('\n');
  const packages = new Set<string>();
  for (const url of urls) {
    const name = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1];
    if (name !== undefined) packages.add(name);
  }
  return { ...result, packages };
}

function runCliWithHooks(out: string, args: string[]): Promise<{ code: number; stderr: string }> {
  return runCli(args, { env: { PARKBENCH_IMPORTS_OUT: out }, nodeArgs: ['--import', REGISTER] });
}

test('--help, protocol decode and admin box status load no fastify, aedes, pg or noble; the store loads when a command opens it', async (t) => {
  const dir = tempDir(t);
  const database = join(dir, 'demo.sqlite');
  const demo = await runCli(['admin', 'demo', '--database', database]);
  t.is(demo.code, 0, demo.stderr);
  const frame = sealCommand({ key: boxKey, kind: FrameKind.BATTERY_QUERY, keyId: 1, scope: 101 }).toString('hex');

  const help = await packagesLoadedBy(join(dir, 'help.txt'), ['--help']);
  t.is(help.code, 0, help.stderr);
  t.deepEqual([...help.packages].sort(), ['commander'], 'the help loads commander alone');

  const decode = await packagesLoadedBy(join(dir, 'decode.txt'), ['protocol', 'decode', frame]);
  t.is(decode.code, 0, decode.stderr);
  t.deepEqual([...decode.packages].sort(), ['commander'], 'the protocol is ours and node:crypto only');

  const status = await packagesLoadedBy(join(dir, 'status.txt'), ['admin', 'box', 'status', '--database', database]);
  t.is(status.code, 0, status.stderr);
  t.true(status.packages.has('kysely') && status.packages.has('better-sqlite3'), [...status.packages].join(', '));
  for (const name of HEAVY) t.false(status.packages.has(name), `admin box status loads ${name}`);
});
