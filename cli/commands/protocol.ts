// `parkbench protocol ...`: decode frames, seal ACCESS commands, regenerate
// the test vectors (docs/protocol.md, Test vectors). The work lives in cli/protocol/.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Command, Option } from 'commander';
import { testVectorsJson } from '../../firmware-protocol/index.js';
import { CliError } from '../errors.js';
import { type FrameShape, decodeFrame } from '../protocol/decode.js';
import { parseFrameText, parseKeyFlag } from '../protocol/input.js';
import { type SealAccessFlags, sealAccessBase64 } from '../protocol/seal-access.js';

/** Where `protocol vectors` writes by default: firmware-protocol/test-vectors.json. */
export const defaultVectorsPath = fileURLToPath(new URL('../../firmware-protocol/test-vectors.json', import.meta.url));

interface DecodeFlags {
  as?: FrameShape;
  key?: string;
  command?: string;
}

export function registerProtocolCommands(program: Command): void {
  const protocol = program.command('protocol').description('Box protocol tools: decode frames, seal commands, test vectors (PROTOCOL.md)');

  protocol
    .command('decode')
    .description('Print a command, response or serial link frame as JSON. Exit 1 if the bytes are no frame (or do not verify under --key).')
    .argument('<bytes>', 'the frame: hex when it is an even number of hex digits (0x, spaces and colons allowed), else base64 (standard alphabet, padded)')
    .addOption(new Option('--as <shape>', 'force the shape instead of detecting it').choices(['command', 'response', 'link']))
    .option('--key <hex>', 'a key (32 hex digits): opens a command (K_park or K_box) or verifies a response (K_box)')
    .option('--command <bytes>', 'the command a response answers (hex or base64), for its AAD; without it a response verifies as a status report')
    .action((text: string, flags: DecodeFlags) => {
      const key = flags.key === undefined ? undefined : parseKeyFlag('--key', flags.key);
      const command = flags.command === undefined ? undefined : parseFrameText(flags.command, '--command');
      const outcome = decodeFrame(parseFrameText(text), { as: flags.as, key, command });
      process.stdout.write(`${JSON.stringify(outcome.json, null, 2)}\n`);
      if (outcome.failure !== undefined) throw new CliError(outcome.failure);
    });

  protocol
    .command('seal-access')
    .description('Seal an ACCESS command under a parking key and print it as base64 (a random nonce unless --nonce)')
    .requiredOption('--parking-key <hex>', 'K_park, 32 hex digits')
    .requiredOption('--key-id <n>', 'smart key id, u32')
    .requiredOption('--parking <n>', 'secured parking id (the scope), u32')
    .requiredOption('--modules <ids>', '1 to 32 module ids, comma separated, e.g. 101,102')
    .requiredOption('--from <iso>', 'not_before, ISO 8601 with a zone, e.g. 2026-01-01T00:00:00Z')
    .requiredOption('--to <iso>', 'not_after, ISO 8601 with a zone, not before --from')
    .requiredOption('--entries <n>', 'max_entries, 0..255')
    .requiredOption('--exits <n>', 'max_exits, 0..255')
    .option('--nonce <hex>', 'a fixed 12-byte nonce (24 hex digits), for reproducible frames; never reuse one in service')
    .action((flags: SealAccessFlags) => {
      process.stdout.write(`${sealAccessBase64(flags)}\n`);
    });

  protocol
    .command('vectors')
    .description('Regenerate firmware-protocol/test-vectors.json (deterministic: fixed keys and nonces)')
    .option('--out <file>', 'write here instead', defaultVectorsPath)
    .option('--check', 'write nothing; exit 1 if the file differs from what would be generated')
    .action((flags: { out: string; check?: boolean }) => {
      const text = testVectorsJson();
      if (flags.check === true) {
        let current: string;
        try {
          current = readFileSync(flags.out, 'utf8');
        } catch {
          throw new CliError(`${flags.out} cannot be read`);
        }
        if (current !== text) throw new CliError(`${flags.out} is out of date: run parkbench protocol vectors`);
        process.stdout.write(`${flags.out} is up to date\n`);
        return;
      }
      writeFileSync(flags.out, text);
      process.stdout.write(`wrote ${flags.out}\n`);
    });
}
