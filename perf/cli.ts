// npm run perf:cli [-- --runs 15 --compare PATH]
//
// How long the command line takes to start and finish, as a user runs it
// (the compiled bin, plain node), against a bare `node -e 0` measured in the
// same rounds: `parkbench --help`, `parkbench protocol decode <an ACCESS
// frame>`, and `parkbench admin box status` on a demo database (made once by
// `parkbench admin demo`). Each round runs every case once, in turn; a figure
// is the median wall time over the rounds, and its ratio the median of the
// rounds' ratios to `node -e 0` (a burst of load spoils a round, not the
// figure).
// `--compare PATH`: another parkbench bin (a checkout of the commit before,
// `../before/bin/parkbench.js`) runs the same cases in the same rounds, on a
// demo database of its own: the two commits in the same hour.
// Targets: --help at most 0.30 s and 5x `node -e 0`; protocol decode at most
// 0.40 s; admin box status at most 0.60 s.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { FrameKind, sealCommand } from '../firmware-protocol/index.js';
import { assertBuilt, binPath } from '../testkit/built-cli.js';
import { formatNumber, percentile } from './support/processes.js';

const runs = Number(argument('--runs') ?? 15);
if (!Number.isInteger(runs) || runs < 10)
  throw new Error(`--runs must be an integer of 10 or more, got ${String(runs)}`);
const compare = argument('--compare');

interface Case {
  name: string;
  argv: (bin: string, database: string) => string[];
  /** Wall time at most this many seconds, and (for --help) at most this many times `node -e 0`. */
  targetSeconds?: number;
  targetRatio?: number;
}

const frame = sealCommand({
  key: Buffer.from('000102030405060708090a0b0c0d0e0f', 'hex'),
  kind: FrameKind.ACCESS,
  keyId: 42,
  scope: 7,
  body: { notBefore: 1_767_225_600, notAfter: 1_767_232_800, maxEntries: 3, maxExits: 3, moduleIds: [101, 102] },
}).toString('hex');

const CASES: Case[] = [
  { name: 'parkbench --help', argv: (bin) => [bin, '--help'], targetSeconds: 0.3, targetRatio: 5 },
  { name: 'parkbench protocol decode', argv: (bin) => [bin, 'protocol', 'decode', frame], targetSeconds: 0.4 },
  {
    name: 'parkbench admin box status',
    argv: (bin, database) => [bin, 'admin', 'box', 'status', '--database', database],
    targetSeconds: 0.6,
  },
];

/** The environment of every run: the database is the flag's alone. */
const env: NodeJS.ProcessEnv = { ...process.env };
delete env.DATABASE_URL;
delete env.DATABASE_PATH;

/** Runs `node ARGV` to its end; its wall time in seconds. */
function timed(argv: readonly string[]): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const start = performance.now();
    execFile(process.execPath, argv, { env, timeout: 120_000 }, (error, _stdout, stderr) => {
      const seconds = (performance.now() - start) / 1000;
      if (error) reject(new Error(`node ${argv.slice(0, 3).join(' ')} failed: ${stderr || error.message}`));
      else resolvePromise(seconds);
    });
  });
}

assertBuilt();
const directory = await mkdtemp(join(tmpdir(), 'pb-perf-cli-'));
try {
  const bins = [{ label: 'this build', bin: binPath, database: join(directory, 'this.sqlite') }];
  if (compare !== undefined)
    bins.push({ label: `compare (${compare})`, bin: resolve(compare), database: join(directory, 'compare.sqlite') });
  for (const { bin, database } of bins) await timed([bin, 'admin', 'demo', '--database', database]);

  const load = loadavg().map((value) => value.toFixed(2));
  process.stdout.write(`perf:cli: ${runs} rounds, load average ${load.join(' ')}\n`);
  const baseline: number[] = [];
  /** [bin][case] -> wall seconds of each round, and its ratio to that round's `node -e 0`. */
  const walls = bins.map(() => CASES.map(() => [] as number[]));
  const ratios = bins.map(() => CASES.map(() => [] as number[]));
  for (let round = 0; round < runs; round += 1) {
    const bare = await timed(['-e', '0']);
    baseline.push(bare);
    // Which bin goes first alternates, round after round.
    const order = round % 2 === 0 ? bins.map((_, index) => index) : bins.map((_, index) => index).reverse();
    for (const b of order) {
      const entry = bins[b];
      if (entry === undefined) continue;
      const { bin, database } = entry;
      for (const [c, testCase] of CASES.entries()) {
        const wall = await timed(testCase.argv(bin, database));
        walls[b]?.[c]?.push(wall);
        ratios[b]?.[c]?.push(wall / bare);
      }
    }
  }

  const median = (values: number[]): number =>
    percentile(
      [...values].sort((x, y) => x - y),
      0.5,
    );
  process.stdout.write(`\nnode -e 0 (baseline): median ${formatNumber(median(baseline), 3)} s\n`);
  for (const [b, { label }] of bins.entries()) {
    process.stdout.write(`\n${label}:\n`);
    for (const [c, testCase] of CASES.entries()) {
      const wall = median(walls[b]?.[c] ?? []);
      const ratio = median(ratios[b]?.[c] ?? []);
      const met =
        (testCase.targetSeconds === undefined || wall <= testCase.targetSeconds) &&
        (testCase.targetRatio === undefined || ratio <= testCase.targetRatio);
      const target = [
        testCase.targetSeconds === undefined ? '' : `${testCase.targetSeconds} s`,
        testCase.targetRatio === undefined ? '' : `${testCase.targetRatio}x`,
      ]
        .filter((part) => part !== '')
        .join(', ');
      process.stdout.write(
        `  ${testCase.name.padEnd(28)} median ${formatNumber(wall, 3)} s, ${formatNumber(ratio, 1)}x node -e 0` +
          ` (min ${formatNumber(Math.min(...(walls[b]?.[c] ?? [])), 3)} s)` +
          (b === 0 ? `; target ${target}: ${met ? 'met' : 'MISSED'}` : '') +
          '\n',
      );
    }
  }
  if (bins.length === 2) {
    process.stdout.write('\nthis build against the compared bin (median of the rounds, wall):\n');
    for (const [c, testCase] of CASES.entries())
      process.stdout.write(
        `  ${testCase.name.padEnd(28)} ${formatNumber(median(walls[0]?.[c] ?? []) / median(walls[1]?.[c] ?? []), 2)}x\n`,
      );
  }
} finally {
  await rm(directory, { recursive: true, force: true });
}

function argument(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index === -1 ? undefined : process.argv[index + 1];
}
