// Prices of parking sessions, in integer minor units (never floats).

/** The price of the whole window: price_per_hour × minutes / 60, rounded half up. */
export function windowAmount(pricePerHourMinor: number, minutes: number): number {
  return Math.floor((pricePerHourMinor * minutes + 30) / 60);
}

/** The price of the time actually used: every minute started counts, and the
 * amount is rounded up to the minor unit (the "rounded up"). */
export function usedAmount(pricePerHourMinor: number, elapsedMs: number): number {
  const minutes = Math.ceil(Math.max(0, elapsedMs) / 60_000);
  return Math.ceil((pricePerHourMinor * minutes) / 60);
}
