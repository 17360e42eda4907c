// `parkbench protocol issuer-key`: a fresh issuer key pair (docs/protocol.md,
// keys) for trying ACCESS_SIGNED by hand. The private key goes to a file
// (PKCS#8 PEM, mode 0600, never over an existing file); the public key,
// 128 hex digits (X || Y), is the only thing printed.
import { writeFileSync } from 'node:fs';
import { generateIssuerKeyPair, issuerPrivateKeyObject } from '../../firmware-protocol/index.js';
import { CliError } from '../errors.js';

/** Writes the private key to `out`; returns the public key as hex. */
export function writeIssuerKey(out: string): string {
  const pair = generateIssuerKeyPair();
  const pem = issuerPrivateKeyObject(pair.privateKey).export({ format: 'pem', type: 'pkcs8' });
  try {
    // 'wx': fails if the file exists (it may hold the only copy of a key).
    writeFileSync(out, pem, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new CliError(
      code === 'EEXIST'
        ? `${out} exists: not overwritten (remove it or choose another --out)`
        : `${out} cannot be written (${code ?? 'error'})`,
    );
  }
  return pair.publicKey.toString('hex');
}
