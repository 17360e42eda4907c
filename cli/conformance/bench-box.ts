// `--bench FILE [--box MODULE_ID]` of `parkbench conformance`, `power` and
// `gateway`: the bench file loaded and checked (lib/bench/bench-file.ts),
// each of its problems one line and exit 2, and the box picked by its
// module_id (a bench of one box needs none).
import {
  benchBox,
  BenchFileError,
  loadBenchFile,
  mqttPassword,
  powerPassword,
  type BenchFile,
  type BenchBox,
} from '../../lib/bench/bench-file.js';
import { UsageError } from '../errors.js';

export async function loadBench(path: string): Promise<BenchFile> {
  return usage(() => loadBenchFile(path));
}

/** The box `--box MODULE_ID` names on the bench (the only one without it). */
export function pickBox(bench: BenchFile, box: string | undefined): BenchBox {
  if (box !== undefined && !/^\d+$/.test(box.trim()))
    throw new UsageError(`with --bench, --box is a module_id of ${bench.path}, got "${box}"`);
  const picked = usageSync(() => benchBox(bench, box === undefined ? undefined : Number(box)));
  // A plug's password missing from the environment is found before any link opens.
  usageSync(() => powerPassword(picked.power));
  return picked;
}

/** The MQTT password of a box's link, from the environment variable the file names. */
export function passwordOf(box: BenchBox, env: NodeJS.ProcessEnv = process.env): string | undefined {
  return usageSync(() => mqttPassword(box, env));
}

async function usage<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof BenchFileError) throw new UsageError(error.message);
    throw error;
  }
}

function usageSync<T>(run: () => T): T {
  try {
    return run();
  } catch (error) {
    if (error instanceof BenchFileError) throw new UsageError(error.message);
    throw error;
  }
}
