// Runs Debian's tshark with parkbench's Wireshark dissector
// (tools/wireshark/parkbench.lua) over a capture file and reads what it
// dissected: fields per packet (`-T fields`), the frames a display filter
// keeps (`-Y`), or the whole tree as text (`-V`). Every run fails on a Lua
// error, whether tshark prints it on stderr (the script does not load) or
// puts it in a packet's tree (the dissector failed on that packet: the
// `_ws.lua.error` expert item, asked for in every run). tshark runs with a
// HOME of its own, so no personal plugin or preference of the machine's
// user takes part.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const DISSECTOR_PATH = fileURLToPath(new URL('../../tools/wireshark/parkbench.lua', import.meta.url));

/** What tshark says on stderr when a file ends inside a block. */
const CUT_SHORT = /appears to have been cut short in the middle of a packet/;
const LUA_ERROR_FIELD = '_ws.lua.error';
/** Between the values of a field found more than once in a packet. */
const AGGREGATOR = '|';

let home: string | undefined;
function emptyHome(): string {
  if (home === undefined) {
    const made = mkdtempSync(join(tmpdir(), 'pb-tshark-home-'));
    home = made;
    process.once('exit', () => rmSync(made, { recursive: true, force: true }));
  }
  return home;
}

export interface TsharkOptions {
  /** A display filter (`-Y`): only the packets it keeps. */
  readonly filter?: string;
  /** The file ends inside a block: tshark says so and exits non-zero, which is then expected. */
  readonly cutShort?: boolean;
  /** Another Lua script instead of the dissector (to show that an error in one is caught). */
  readonly script?: string;
}

export class TsharkError extends Error {
  override readonly name = 'TsharkError';
}

/** What went wrong in a run, or undefined. */
function failureOf(error: Error | null, stderr: string, cutShortExpected: boolean): string | undefined {
  if (/\bLua\b/.test(stderr)) return 'a Lua error';
  const cutShort = CUT_SHORT.test(stderr);
  if (cutShort !== cutShortExpected) return cutShort ? 'unexpectedly cut short' : 'expected to be cut short';
  if (error !== null && !cutShort) return error.message;
  return undefined;
}

/** Runs tshark on `file` with the dissector and `args`; returns its stdout. */
export function runTshark(file: string, args: readonly string[], options: TsharkOptions = {}): Promise<string> {
  const argv = [
    '-n',
    '-X',
    `lua_script:${options.script ?? DISSECTOR_PATH}`,
    '-r',
    file,
    ...(options.filter === undefined ? [] : ['-Y', options.filter]),
    ...args,
  ];
  return new Promise((resolve, reject) => {
    execFile(
      'tshark',
      argv,
      { env: { ...process.env, HOME: emptyHome() }, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const failure = failureOf(error, stderr, options.cutShort ?? false);
        if (failure === undefined) resolve(stdout);
        else reject(new TsharkError(`${failure}: tshark ${argv.join(' ')}\n${stderr}`));
      },
    );
  });
}

/** One packet as `-T fields` gives it: every value of each field asked for. */
export interface DissectedPacket {
  readonly frame: number;
  /** The Info column. */
  readonly info: string;
  readonly fields: Readonly<Record<string, readonly string[]>>;
}

/** The named fields of every packet (that `options.filter` keeps). Fails on any Lua error. */
export async function dissect(
  file: string,
  fields: readonly string[],
  options: TsharkOptions = {},
): Promise<DissectedPacket[]> {
  const columns = ['frame.number', LUA_ERROR_FIELD, '_ws.col.Info', ...fields];
  const stdout = await runTshark(
    file,
    [
      '-T',
      'fields',
      '-E',
      'occurrence=a',
      '-E',
      `aggregator=${AGGREGATOR}`,
      '-E',
      'quote=n',
      ...columns.flatMap((field) => ['-e', field]),
    ],
    options,
  );
  return stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const values = line.split('\t');
      const [frame = '', luaError = '', info = ''] = values;
      if (luaError !== '') throw new TsharkError(`a Lua error in the tree of packet ${frame}: ${line}`);
      const found: Record<string, string[]> = {};
      fields.forEach((field, index) => {
        const value = values[3 + index] ?? '';
        found[field] = value === '' ? [] : value.split(AGGREGATOR);
      });
      return { frame: Number(frame), info, fields: found };
    });
}

/** The numbers of the frames that `filter` keeps. */
export async function framesMatching(file: string, filter: string, options: TsharkOptions = {}): Promise<number[]> {
  return (await dissect(file, [], { ...options, filter })).map((packet) => packet.frame);
}

/** The packets' trees as text (`-V`), for what fields do not show. Fails on any Lua error. */
export async function dissectedText(file: string, options: TsharkOptions = {}): Promise<string> {
  const text = await runTshark(file, ['-V'], options);
  if (text.includes('Lua Error')) throw new TsharkError(`a Lua error in a tree:\n${text}`);
  return text;
}

/** A boolean field's value as `-T fields` prints it: `1`/`0` in tshark 4.0, `True`/`False` from 4.2. */
export function isTrue(value: string | undefined): boolean {
  if (value === '1' || value === 'True') return true;
  if (value === '0' || value === 'False') return false;
  throw new TsharkError(`not a boolean field's value: ${String(value)}`);
}
