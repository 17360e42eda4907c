// The simulator's own power switch: a file holding `on` or `off`, so a
// bench's `command` power driver (`echo off > F`) can switch a simulated box
// as it would a real one. Watched with fs.watch on its folder (editors and
// `echo >` replace or truncate the file, which a watch on the file itself
// loses) and read again on a slow poll, in case an event never comes.
import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import type { Clock, TimerHandle } from '../lib/clock.js';
import { messageOf } from '../lib/message-of.js';

export type PowerState = 'on' | 'off';

export interface PowerFileOptions {
  readonly path: string;
  readonly clock: Clock;
  /** How often the file is read besides the watch's events, ms. */
  readonly pollMs?: number;
  /** Called when the file says something else than before (not at start). */
  readonly onChange: (power: PowerState) => void;
  /** One line for a file that says neither on nor off (once per content). */
  readonly onWarning: (line: string) => void;
}

export const DEFAULT_POWER_POLL_MS = 1_000;

/** What a power file's text says: `on` or `off`, whitespace trimmed; anything else is undefined. */
export function powerOf(text: string): PowerState | undefined {
  const word = text.trim();
  return word === 'on' || word === 'off' ? word : undefined;
}

/** The file's text, or undefined for a missing file (which means on). */
async function readPowerText(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * What the file says: `on` or `off`, whitespace trimmed; a missing file
 * means on; anything else is undefined (the switch stays as it is; an empty
 * file without a warning, since that is a write under way).
 */
export async function readPowerFile(path: string): Promise<PowerState | undefined> {
  const text = await readPowerText(path);
  return text === undefined ? 'on' : powerOf(text);
}

export class PowerFile {
  #state: PowerState;
  #watcher: FSWatcher | undefined;
  #timer: TimerHandle | undefined;
  #closed = false;
  #reading = false;
  #again = false;
  /** The content last warned about, so a poll does not repeat the warning. */
  #warned: string | undefined;

  private constructor(
    private readonly options: PowerFileOptions,
    state: PowerState,
  ) {
    this.#state = state;
  }

  /** Reads the file once (a file that says neither: on, with a warning) and starts watching it. */
  static async watch(options: PowerFileOptions): Promise<PowerFile> {
    const pollMs = options.pollMs ?? DEFAULT_POWER_POLL_MS;
    if (!Number.isFinite(pollMs) || pollMs <= 0) throw new RangeError(`pollMs must be positive, got ${pollMs}`);
    const file = new PowerFile(options, 'on');
    await file.#read(false);
    const name = basename(options.path);
    try {
      file.#watcher = watch(dirname(options.path), { persistent: false }, (_event, changed) => {
        if (changed === null || changed === name) file.#check();
      });
      file.#watcher.on('error', () => undefined);
    } catch {
      // No folder to watch (yet): the poll still reads the file.
    }
    file.#schedule(pollMs);
    return file;
  }

  get state(): PowerState {
    return this.#state;
  }

  close(): void {
    this.#closed = true;
    this.#watcher?.close();
    if (this.#timer !== undefined) this.options.clock.clearTimeout(this.#timer);
  }

  #schedule(pollMs: number): void {
    this.#timer = this.options.clock.setTimeout(() => {
      this.#check();
      if (!this.#closed) this.#schedule(pollMs);
    }, pollMs);
  }

  /** Reads the file, one read at a time; an event during a read reads again after it. */
  #check(): void {
    if (this.#closed) return;
    if (this.#reading) {
      this.#again = true;
      return;
    }
    this.#reading = true;
    void this.#read().finally(() => {
      this.#reading = false;
      if (this.#again) {
        this.#again = false;
        this.#check();
      }
    });
  }

  async #read(notify = true): Promise<void> {
    // One read, classified and quoted from the same text: a second read could
    // see the next write and warn about a word that is valid.
    let text: string;
    try {
      text = ((await readPowerText(this.options.path)) ?? 'on').trim();
    } catch (error) {
      this.#warn(`power file ${this.options.path}: ${messageOf(error)}; the power stays ${this.#state}`, 'error');
      return;
    }
    if (this.#closed) return;
    const power = powerOf(text);
    // `echo off > F` truncates before it writes: an empty file is a write under way.
    if (power === undefined && text === '') return;
    if (power === undefined) {
      this.#warn(
        `power file ${this.options.path} says ${JSON.stringify(text.slice(0, 40))}, not on or off; the power stays ${this.#state}`,
        text,
      );
      return;
    }
    this.#warned = undefined;
    if (power === this.#state) return;
    this.#state = power;
    if (notify) this.options.onChange(power);
  }

  #warn(line: string, content: string): void {
    if (this.#warned === content) return;
    this.#warned = content;
    this.options.onWarning(line);
  }
}
