// `parkbench sim` on one end of a pty pair (socat) with its state in a folder
// and a --power-file, and a bench file whose `command` switch writes that
// file (`echo off > F`, `echo on > F`), as a bench's relay would cut and
// give power: what the bench file's power tests run against.
import type { ExecutionContext } from 'ava';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCli } from './cli-process.js';
import { boxFile, FAST_BARRIER_FLAGS } from './conformance-fixtures.js';
import { ptyPairForTest } from './pty-pair.js';

export interface PoweredSimOptions {
  /** More flags of `parkbench sim`. */
  readonly simFlags?: readonly string[];
  /** More lines of the box's entry in the bench file, indented as its keys are (`    limits: [...]`). */
  readonly benchLines?: readonly string[];
}

/** A simulated box on a pty with its state in a folder and a power file, and the bench file that switches it. */
export async function poweredSim(
  t: ExecutionContext,
  moduleId: number,
  options: PoweredSimOptions = {},
): Promise<{ bench: string; powerFile: string }> {
  const box = await boxFile(t, moduleId);
  const directory = await mkdtemp(join(tmpdir(), 'pb-bench-power-'));
  t.teardown(() => rm(directory, { recursive: true, force: true }));
  const powerFile = join(directory, 'power');
  await writeFile(powerFile, 'on\n');
  const pair = await ptyPairForTest(t);
  const sim = startCli(t, [
    'sim',
    '--box',
    box.path,
    '--serial',
    pair.a,
    '--state-dir',
    join(directory, 'state'),
    '--power-file',
    powerFile,
    ...FAST_BARRIER_FLAGS,
    '--log-level',
    'warn',
    ...(options.simFlags ?? []),
  ]);
  await sim.waitForLine(/^parkbench sim ready /);
  const bench = join(directory, 'bench.yaml');
  // off_ms longer than the simulator's slowest look at its file (a 1 s poll besides its watch).
  await writeFile(
    bench,
    `# box ${moduleId}, simulated, switched by its power file
boxes:
  - module_id: ${moduleId}
    provisioning: ${box.path}
    link: { serial: ${pair.b} }
    power:
      driver: command
      on: echo on > '${powerFile}'
      off: echo off > '${powerFile}'
      off_ms: 1500
      settle_ms: 200
${(options.benchLines ?? []).map((line) => `${line}\n`).join('')}`,
  );
  return { bench, powerFile };
}
