// The names of the deliberate firmware bugs (firmware-bugs.ts holds what
// each does), apart from their code, so the command line's help lists them
// and checks `--bug` without loading the protocol.

export const FIRMWARE_BUGS = [
  'accept-expired',
  'accept-revoked',
  'accept-any-signature',
  'ignore-tries',
  'forget-tries',
] as const;

export type FirmwareBug = (typeof FIRMWARE_BUGS)[number];

export function isFirmwareBug(name: string): name is FirmwareBug {
  return (FIRMWARE_BUGS as readonly string[]).includes(name);
}
