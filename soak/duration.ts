// `--duration`: 30s, 10m, 8h, or parts of them together (1h30m).

const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000 } as const;

export class DurationError extends Error {
  override readonly name = 'DurationError';
}

/** Milliseconds; a DurationError (one line) for anything else than a positive duration. */
export function parseDuration(text: string): number {
  const trimmed = text.trim();
  if (!/^(\d+(\.\d+)?[hms])+$/.test(trimmed))
    throw new DurationError(`"${text}" is no duration: write 30s, 10m, 8h or 1h30m`);
  let total = 0;
  for (const [, amount = '0', unit = 's'] of trimmed.matchAll(/(\d+(?:\.\d+)?)([hms])/g))
    total += Number(amount) * UNIT_MS[unit as keyof typeof UNIT_MS];
  if (total <= 0) throw new DurationError(`"${text}" is no duration: it must be more than 0`);
  return Math.round(total);
}
