// `--capture FILE`, `--capture-max-mb N` and `--capture-files N`, the same
// on every command that records its links (sim, gateway, conformance): read
// and checked here, the file opened before any link starts, so a path that
// cannot be written is one line and exit 2, not a run without its capture.
import type { Command } from 'commander';
import { CaptureFile, CaptureFileError } from '../lib/capture/capture-file.js';
import type { Logger } from '../lib/logger.js';
import { packageVersionNear } from '../lib/package-version.js';
import { UsageError } from './errors.js';

export interface CaptureFlags {
  capture?: string;
  captureMaxMb?: string;
  captureFiles?: string;
}

const MEBIBYTE = 1024 * 1024;

/** Adds the capture flags to `command`; `what` says what is recorded. */
export function addCaptureOptions(command: Command, what: string): Command {
  return command
    .option('--capture <file>', `record ${what} to this pcapng file (docs/capture.md; open it in Wireshark)`)
    .option(
      '--capture-max-mb <n>',
      'rotate: start a new capture file before one passes N MiB (FILE_00001_<time>.pcapng, ...)',
    )
    .option('--capture-files <n>', 'with --capture-max-mb: keep only the newest N capture files');
}

function positiveInteger(flag: string, raw: string, max: number): number {
  const value = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(value) || value < 1 || value > max)
    throw new UsageError(`${flag} must be a whole number from 1 to ${max}, got "${raw}"`);
  return value;
}

/** The capture's limits, checked; undefined without --capture. */
export function captureLimits(flags: CaptureFlags): { maxBytes?: number; maxFiles?: number } | undefined {
  if (flags.capture === undefined) {
    if (flags.captureMaxMb !== undefined) throw new UsageError('--capture-max-mb needs --capture FILE');
    if (flags.captureFiles !== undefined) throw new UsageError('--capture-files needs --capture FILE');
    return undefined;
  }
  if (flags.capture.trim() === '') throw new UsageError('--capture needs a file name');
  if (flags.captureFiles !== undefined && flags.captureMaxMb === undefined)
    throw new UsageError('--capture-files needs --capture-max-mb (files rotate only by size)');
  return {
    ...(flags.captureMaxMb === undefined
      ? {}
      : { maxBytes: positiveInteger('--capture-max-mb', flags.captureMaxMb, 1024 * 1024) * MEBIBYTE }),
    ...(flags.captureFiles === undefined
      ? {}
      : { maxFiles: positiveInteger('--capture-files', flags.captureFiles, 100_000) }),
  };
}

/** Opens the capture file of `--capture`, or undefined without it. `tool`
 * goes in the file's shb_userappl. A write error later stops the capture
 * with one error line on `logger`; the command goes on. */
export function openCaptureFile(flags: CaptureFlags, tool: string, logger: Logger): CaptureFile | undefined {
  const limits = captureLimits(flags);
  if (limits === undefined || flags.capture === undefined) return undefined;
  const path = flags.capture;
  try {
    return new CaptureFile({
      path,
      ...limits,
      application: `parkbench ${packageVersionNear(import.meta.url)} ${tool}`,
      onStop: (error) => logger.error({ err: error }, `capture to ${path} stopped: ${error.message}`),
    });
  } catch (error) {
    if (error instanceof CaptureFileError) throw new UsageError(`--capture: ${error.message}`);
    throw error;
  }
}
