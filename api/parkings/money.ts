// Prices as the API and the command line write them ("2.50") and as the
// store keeps them (minor units, 250). Apart from the store, so the command
// line checks a price flag without loading it.

/** "2.50" -> 250; undefined when not a non-negative decimal with at most 2 decimals. */
export function parseMinorUnits(price: string): number | undefined {
  const match = /^(\d{1,9})(?:\.(\d{1,2}))?$/.exec(price.trim());
  if (!match) return undefined;
  return Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
}

/** 250 -> "2.50". */
export function formatMinorUnits(minor: number): string {
  return `${Math.trunc(minor / 100)}.${String(minor % 100).padStart(2, '0')}`;
}
