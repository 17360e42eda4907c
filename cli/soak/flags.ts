// The flags of `parkbench soak`, checked in one place before a link is
// opened: the link, the box and the times as `parkbench conformance` reads
// them (its parseConformanceFlags), then when the run ends (--cycles,
// --duration), the limits (--limit, --limits FILE), and --report DIR. Any
// problem is a UsageError: one line, exit code 2.
import { statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { messageOf } from '../../lib/message-of.js';
import { DurationError, parseDuration } from '../../soak/duration.js';
import { LimitError, parseLimits, withDefaultLimits, type Limit } from '../../soak/limits.js';
import { parseLimitsFile } from '../../soak/limits-file.js';
import type { SoakStop } from '../../soak/run-soak.js';
import { parseConformanceFlags, type ConformanceOptions } from '../conformance/flags.js';
import { UsageError } from '../errors.js';

export interface SoakFlags {
  box?: string;
  serial?: string;
  ble?: string;
  mqtt?: string;
  moduleId?: string;
  username?: string;
  password?: string;
  topicPrefix: string;
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
  json?: boolean;
  report?: string;
  logLevel: string;
}

export interface SoakOptions {
  readonly link: ConformanceOptions;
  readonly stop: SoakStop;
  readonly limits: readonly Limit[];
  readonly json: boolean;
  readonly reportDir: string | undefined;
}

/** Most cycles one run takes (a u32 of key ids above 2^31 leaves room for far more). */
const MAX_CYCLES = 1_000_000_000;

export async function parseSoakFlags(flags: SoakFlags, nowMs: number): Promise<SoakOptions> {
  const stop = stopOf(flags);
  const limits = await limitsOf(flags);
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
  return { link, stop, limits, json: flags.json === true, reportDir: flags.report };
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
    return withDefaultLimits(given);
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
