// The flags of `parkbench soak`, checked in one place before a link is
// opened: the link, the box and the times as `parkbench conformance` reads
// them (its parseConformanceFlags, the bench file included), then when the
// run ends (--cycles, --duration), the power cycles (--power-cycle-every,
// through the bench file's switch), the limits (--limit and --limits FILE,
// else the bench file's `limits:`, failures==0 added unless one bounds the
// failures), and --report DIR. Any problem is a UsageError: one line, exit
// code 2.
import { statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { messageOf } from '../../lib/message-of.js';
import { DurationError, parseDuration } from '../../soak/duration.js';
import { LimitError, parseLimit, parseLimits, withDefaultLimits, type Limit } from '../../soak/limits.js';
import { parseLimitsFile } from '../../soak/limits-file.js';
import type { SoakStop } from '../../soak/run-soak.js';
import { parseConformanceFlags, type ConformanceOptions } from '../conformance/flags.js';
import { UsageError } from '../errors.js';
import type { RecordFlags } from '../service/record-flags.js';

export interface SoakFlags extends RecordFlags {
  bench?: string;
  box?: string;
  serial?: string;
  ble?: string;
  mqtt?: string;
  moduleId?: string;
  username?: string;
  password?: string;
  topicPrefix?: string;
  cycles?: string;
  duration?: string;
  answerMs: string;
  cycleMs: string;
  waitMs: string;
  controlSeq?: string;
  restoreIssuerKey?: string;
  restoreIssuerKeyPrevious?: string;
  limit?: string[];
  limits?: string;
  powerCycleEvery?: string;
  json?: boolean;
  report?: string;
  logLevel: string;
}

export interface SoakOptions {
  readonly link: ConformanceOptions;
  readonly stop: SoakStop;
  /** Power-cycle the box before every this many cycles (the bench file's switch). */
  readonly powerCycleEvery: number | undefined;
  readonly limits: readonly Limit[];
  readonly json: boolean;
  readonly reportDir: string | undefined;
}

/** Most cycles one run takes (a u32 of key ids above 2^31 leaves room for far more). */
const MAX_CYCLES = 1_000_000_000;

export async function parseSoakFlags(flags: SoakFlags, nowMs: number): Promise<SoakOptions> {
  const stop = stopOf(flags);
  const powerCycleEvery = powerCycleEveryOf(flags);
  const given = await limitsOf(flags);
  if (flags.report !== undefined) checkReportDir(flags.report);
  const link = await parseConformanceFlags(
    {
      ...flags,
      heldRevocations: '0',
      protocol: '2',
      json: flags.json === true,
    },
    nowMs,
  );
  if (powerCycleEvery !== undefined && link.power === undefined)
    throw new UsageError(
      "--power-cycle-every needs a power switch: the box's power: entry in a bench file (--bench FILE)",
    );
  // The flags' limits, else the bench file's; failures==0 unless they bound the failures.
  const limits = given.length > 0 ? given : benchLimitsOf(link);
  return {
    link,
    stop,
    powerCycleEvery,
    limits: withDefaultLimits(limits),
    json: flags.json === true,
    reportDir: flags.report,
  };
}

function powerCycleEveryOf(flags: SoakFlags): number | undefined {
  if (flags.powerCycleEvery === undefined) return undefined;
  const raw = flags.powerCycleEvery.trim();
  const every = Number(raw);
  if (!/^\d+$/.test(raw) || every < 1 || every > MAX_CYCLES)
    throw new UsageError(
      `--power-cycle-every must be an integer from 1 to ${MAX_CYCLES}, got "${flags.powerCycleEvery}"`,
    );
  return every;
}

/** The box's `limits:` in the bench file, each problem naming its place there. */
function benchLimitsOf(link: ConformanceOptions): Limit[] {
  const bench = link.benchLimits;
  if (bench === undefined) return [];
  return bench.expressions.map((expression, index) => {
    try {
      return parseLimit(expression);
    } catch (error) {
      if (error instanceof LimitError) throw new UsageError(`${bench.place}.limits[${index}]: ${error.message}`);
      throw error;
    }
  });
}

function stopOf(flags: SoakFlags): SoakStop {
  if (flags.cycles === undefined && flags.duration === undefined)
    throw new UsageError('give --cycles N or --duration D (30s, 10m, 8h), or both: the run ends at the first');
  let durationMs: number | undefined;
  if (flags.duration !== undefined) {
    try {
      durationMs = parseDuration(flags.duration);
    } catch (error) {
      if (error instanceof DurationError) throw new UsageError(`--duration: ${error.message}`);
      throw error;
    }
  }
  let cycles: number | undefined;
  if (flags.cycles !== undefined) {
    const raw = flags.cycles.trim();
    cycles = Number(raw);
    if (!/^\d+$/.test(raw) || cycles < 1 || cycles > MAX_CYCLES)
      throw new UsageError(`--cycles must be an integer from 1 to ${MAX_CYCLES}, got "${flags.cycles}"`);
  }
  return { ...(cycles === undefined ? {} : { cycles }), ...(durationMs === undefined ? {} : { durationMs }) };
}

/** The limits of --limit and --limits FILE, as given (no default added). */
async function limitsOf(flags: SoakFlags): Promise<Limit[]> {
  try {
    const given = parseLimits(flags.limit ?? []);
    if (flags.limits !== undefined) {
      const path = flags.limits;
      const text = await readFile(path, 'utf8').catch((error: unknown) => {
        throw new UsageError(`--limits: cannot read ${path}: ${messageOf(error)}`);
      });
      given.push(...parseLimitsFile(text, path));
    }
    return given;
  } catch (error) {
    if (error instanceof LimitError) throw new UsageError(error.message);
    throw error;
  }
}

/** --report DIR: made when missing; a path that is something else than a folder is refused. */
function checkReportDir(path: string): void {
  try {
    if (!statSync(path).isDirectory()) throw new UsageError(`--report ${path} is not a folder`);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new UsageError(`--report ${path}: ${messageOf(error)}`);
  }
}
