// `parkbench protocol ...`: decode frames, seal or sign access commands, make
// an issuer key pair, regenerate the test vectors (docs/protocol.md, Test vectors). The work
// lives in cli/protocol/, which each action imports when it runs.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Command, Option } from 'commander';
import { writeFileAtomic } from '../../lib/atomic-file.js';
import { CliError } from '../errors.js';
import { DEFAULT_OUTPUT_DIR, defaultOutput } from '../default-output.js';
import type { FrameShape } from '../protocol/decode.js';
import type { SealAccessFlags } from '../protocol/seal-access.js';

/** Where `protocol vectors` writes by default: the package's
 * firmware-protocol/test-vectors.json, two folders up from this file's source
 * (cli/commands/), three from its compiled form (dist/cli/commands/). */
export const defaultVectorsPath = fileURLToPath(
  new URL(
    `${import.meta.url.endsWith('.js') ? '../../../' : '../../'}firmware-protocol/test-vectors.json`,
    import.meta.url,
  ),
);

interface DecodeFlags {
  as?: FrameShape;
  key?: string;
  command?: string;
  issuerPublicKey?: string[];
}

/** Commander's collector for a repeatable flag. */
const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

export function registerProtocolCommands(program: Command): void {
  const protocol = program
    .command('protocol')
    .description(
      'Box protocol tools: decode frames, seal or sign access commands, issuer keys, test vectors (docs/protocol.md)',
    );

  protocol
    .command('decode')
    .description(
      'Print a command, response or serial link frame as JSON. Exit 1 if the bytes are no frame (or do not verify under --key or --issuer-public-key).',
    )
    .argument(
      '<bytes>',
      'the frame: hex when it is an even number of hex digits (0x, spaces and colons allowed), else base64 (standard alphabet, padded)',
    )
    .addOption(
      new Option('--as <shape>', 'force the shape instead of detecting it').choices(['command', 'response', 'link']),
    )
    .option('--key <hex>', 'a key (32 hex digits): opens a command (K_park or K_box) or verifies a response (K_box)')
    .option(
      '--command <bytes>',
      'the command a response answers (hex or base64), for its AAD; without it a response verifies as a status report',
    )
    .option(
      '--issuer-public-key <hex>',
      'an issuer public key (128 hex digits, X || Y) that checks the signature of an ACCESS_SIGNED; repeat it or separate keys by commas (issuer_key,issuer_key_previous): valid if any verifies',
      collect,
    )
    .action(async (text: string, flags: DecodeFlags) => {
      const [{ decodeFrame }, { parseFrameText, parseIssuerPublicKeysFlag, parseKeyFlag }] = await Promise.all([
        import('../protocol/decode.js'),
        import('../protocol/input.js'),
      ]);
      const key = flags.key === undefined ? undefined : parseKeyFlag('--key', flags.key);
      const command = flags.command === undefined ? undefined : parseFrameText(flags.command, '--command');
      const issuerKeys =
        flags.issuerPublicKey === undefined
          ? undefined
          : parseIssuerPublicKeysFlag('--issuer-public-key', flags.issuerPublicKey);
      const outcome = decodeFrame(parseFrameText(text), { as: flags.as, key, command, issuerKeys });
      process.stdout.write(`${JSON.stringify(outcome.json, null, 2)}\n`);
      if (outcome.failure !== undefined) throw new CliError(outcome.failure);
    });

  protocol
    .command('seal-access')
    .description(
      'Make an access command and print it as base64 (a random nonce unless --nonce): a sealed ACCESS under --parking-key, or an ACCESS_SIGNED signed with --issuer-key (exactly one of the two)',
    )
    .option('--parking-key <hex>', 'K_park, 32 hex digits: seals an ACCESS (protocol version 1)')
    .option(
      '--issuer-key <file>',
      'the issuer private key (PEM, PKCS#8 or SEC1 "EC PRIVATE KEY", or a file of 64 hex digits): signs an ACCESS_SIGNED (version 2)',
    )
    .requiredOption('--key-id <n>', 'smart key id, u32')
    .requiredOption('--parking <n>', 'secured parking id (the scope), u32')
    .requiredOption('--modules <ids>', '1 to 32 module ids, comma separated, e.g. 101,102')
    .requiredOption('--from <iso>', 'not_before, ISO 8601 with a zone, e.g. 2026-01-01T00:00:00Z')
    .requiredOption('--to <iso>', 'not_after, ISO 8601 with a zone, not before --from')
    .requiredOption('--entries <n>', 'max_entries, 0..255')
    .requiredOption('--exits <n>', 'max_exits, 0..255')
    .option(
      '--nonce <hex>',
      'a fixed 12-byte nonce (24 hex digits), for reproducible frames; never reuse one in service',
    )
    .action(async (flags: SealAccessFlags) => {
      const { sealAccessBase64 } = await import('../protocol/seal-access.js');
      process.stdout.write(`${sealAccessBase64(flags)}\n`);
    });

  protocol
    .command('issuer-key')
    .description(
      'Make an issuer key pair (P-256) for trying ACCESS_SIGNED: write the private key (PEM, mode 0600, never over a file) and print the public key (128 hex digits)',
    )
    .option('--out <file>', `where the private key goes (default ${DEFAULT_OUTPUT_DIR}/issuer-key.pem)`)
    .action(async (flags: { out?: string }) => {
      const { writeIssuerKey } = await import('../protocol/issuer-key.js');
      const publicKey = writeIssuerKey(flags.out ?? defaultOutput('issuer-key.pem'));
      process.stdout.write(`${publicKey}\n`);
    });

  protocol
    .command('vectors')
    .description('Regenerate firmware-protocol/test-vectors.json (deterministic: fixed keys and nonces)')
    .option('--out <file>', 'write here instead', defaultVectorsPath)
    .option('--check', 'write nothing; exit 1 if the file differs from what would be generated')
    .action(async (flags: { out: string; check?: boolean }) => {
      const { testVectorsJson } = await import('../../firmware-protocol/index.js');
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
      await writeFileAtomic(flags.out, text, { mode: 0o644 });
      process.stdout.write(`wrote ${flags.out}\n`);
    });
}
