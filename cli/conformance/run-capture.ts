// `--capture FILE` and `--capture-dir DIR` of `parkbench conformance`: the
// whole run in one pcapng file (rotated by --capture-max-mb and
// --capture-files), and a folder with one file per case. Both are opened
// (the folder made) before the link, so a path that cannot be written is one
// line and exit 2; a write error later stops that capture with one log line
// and the run goes on.
import { accessSync, constants, mkdirSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { RunCapture } from '../../conformance/capture/run-capture.js';
import type { Logger } from '../../lib/logger.js';
import { messageOf } from '../../lib/message-of.js';
import { packageVersionNear } from '../../lib/package-version.js';
import { captureLimits, openCaptureFile, type CaptureFlags } from '../capture-flags.js';
import { UsageError } from '../errors.js';

export interface RunCaptureFlags extends CaptureFlags {
  captureDir?: string;
}

/** The run's capture, or undefined without --capture and --capture-dir. */
export function openRunCapture(flags: RunCaptureFlags, logger: Logger): RunCapture | undefined {
  captureLimits(flags);
  const caseDirectory = flags.captureDir === undefined ? undefined : captureDirectory(flags.captureDir);
  const whole = openCaptureFile(flags, 'conformance', logger);
  if (whole === undefined && caseDirectory === undefined) return undefined;
  return new RunCapture({
    ...(whole === undefined ? {} : { whole }),
    ...(caseDirectory === undefined ? {} : { caseDirectory }),
    // As from cli/ (capture-flags.ts): package.json is one folder above it, or two in dist/.
    application: `parkbench ${packageVersionNear(new URL('..', import.meta.url).href)} conformance`,
    onCaseFilesStopped: (error) =>
      logger.error({ err: error }, `capture of each case to ${flags.captureDir ?? ''} stopped: ${error.message}`),
  });
}

/** The folder of --capture-dir, made when missing, as an absolute path (the
 * JUnit report attaches its files by it); a UsageError when it is no folder
 * or cannot be written. */
function captureDirectory(raw: string): string {
  if (raw.trim() === '') throw new UsageError('--capture-dir needs a folder');
  const path = resolve(raw);
  try {
    mkdirSync(path, { recursive: true });
  } catch (error) {
    if (!isFolder(path)) throw new UsageError(`--capture-dir ${raw} ${folderProblem(path, error)}`);
  }
  try {
    accessSync(path, constants.W_OK | constants.X_OK);
  } catch (error) {
    throw new UsageError(`--capture-dir ${raw} cannot be written: ${messageOf(error)}`);
  }
  return path;
}

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function folderProblem(path: string, error: unknown): string {
  try {
    statSync(path);
    return 'is not a folder';
  } catch {
    return `cannot be made: ${messageOf(error)}`;
  }
}
