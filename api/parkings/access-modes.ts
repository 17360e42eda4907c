// The access modes of a parking: signed (ACCESS_SIGNED under the parking's
// issuer key, protocol version 2) or sealed (ACCESS under its parking key,
// version 1 firmware). Apart from the store, so the command line's help names
// them without loading it.
import type { AccessMode } from './repository.js';

/** Access modes in the order the CLI and the README list them, the default first. */
export const ACCESS_MODES: readonly AccessMode[] = ['signed', 'sealed'];
export const DEFAULT_ACCESS_MODE: AccessMode = 'signed';

export function isAccessMode(value: string): value is AccessMode {
  return (ACCESS_MODES as readonly string[]).includes(value);
}
