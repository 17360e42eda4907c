// Seed corpora for the fuzzers, cut from firmware-protocol/test-vectors.json
// (the same file the tests read): `link/` holds every link frame's encoded
// bytes, one file each and all of them in a row; `command/` every command
// frame of the vectors (sealed, signed, and each decision's), once behind
// each of the first eight mode bytes fuzz_command reads.
//   node libparkbox/tools/seed-corpus.mjs OUT_DIR
import { Buffer } from 'node:buffer';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import process from 'node:process';
import { URL } from 'node:url';

const [out] = process.argv.slice(2);
if (out === undefined) {
  process.stderr.write('usage: node libparkbox/tools/seed-corpus.mjs OUT_DIR\n');
  process.exit(2);
}
const vectors = JSON.parse(readFileSync(new URL('../../firmware-protocol/test-vectors.json', import.meta.url), 'utf8'));
const hex = (text) => Buffer.from(text, 'hex');

const link = vectors.link_frames.map((frame) => hex(frame.bytes));
link.push(Buffer.concat(link));
const commands = [
  ...vectors.commands.map((command) => hex(command.bytes)),
  ...vectors.signed_commands.map((command) => hex(command.bytes)),
  ...vectors.decisions.map((decision) => hex(decision.command)),
];

function write(folder, inputs) {
  mkdirSync(join(out, folder), { recursive: true });
  inputs.forEach((input, index) => writeFileSync(join(out, folder, `seed-${index}`), input));
  return inputs.length;
}

const linkCount = write('link', link);
const commandCount = write(
  'command',
  commands.flatMap((frame) => Array.from({ length: 8 }, (_, mode) => Buffer.concat([Buffer.of(mode), frame]))),
);
process.stdout.write(`seed corpus in ${out}: ${linkCount} link inputs, ${commandCount} command inputs\n`);
