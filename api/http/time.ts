// Times on the wire (docs/architecture.md, Conventions: ISO 8601 with an offset).
// The API writes UTC with an explicit numeric offset and milliseconds,
// `2026-06-01T08:00:00.000+00:00`, which every ISO 8601 parser reads and
// which is literally "with offset" (the spec's words).

export function isoTime(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, -1)}+00:00`;
}

/** Whole Unix seconds of a time in ms (frames carry seconds). */
export function unixSeconds(ms: number): number {
  return Math.floor(ms / 1000);
}

// Times received: one rule for the years accepted, 0001..9999 in
// four digits, whether the time comes as a box log's `created_at` or as an
// MQTT `received_at`. Outside it a time cannot be written back in either
// format (toISOString gives `+010000-…`), and years 0..99 are where
// Date.UTC silently means 1900..1999.
export const FIRST_YEAR = 1;
export const LAST_YEAR = 9999;

/** `created_at` of box logs: `YYYY-MM-DD HH:MM:SS`, UTC. */
const SQL_TIME = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;
/** ISO 8601 as docs/architecture.md, Conventions, says: a `T`, seconds, optional
 * fraction, and `Z` or a numeric offset (no local times, no other forms). */
const ISO_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?(?:Z|([+-])(\d{2}):(\d{2}))$/;

/** ms of a UTC calendar time, or undefined when no such time or outside the years accepted. */
function utcMs(
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  second: number,
): number | undefined {
  if (year < FIRST_YEAR || year > LAST_YEAR || hour > 23 || minute > 59 || second > 59) return undefined;
  const date = new Date(0);
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0..99 as 1900..1999.
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, 0);
  if (date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return undefined;
  return date.getTime();
}

/** The year of a time in ms is one accepted. */
function inYears(ms: number): boolean {
  const year = new Date(ms).getUTCFullYear();
  return year >= FIRST_YEAR && year <= LAST_YEAR;
}

/** "2026-06-01 08:00:00" -> ms (UTC), or undefined if no such time in years 0001..9999. */
export function parseSqlTime(text: string): number | undefined {
  const match = SQL_TIME.exec(text);
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  return utcMs(year, month, day, hour, minute, second);
}

/** "2026-06-01T10:00:00.250+02:00" -> ms (whole seconds are kept, the
 * fraction dropped), or undefined if it is not ISO 8601 with an offset, or
 * if the time, in UTC, is outside years 0001..9999. */
export function parseIsoTime(text: string): number | undefined {
  const match = ISO_TIME.exec(text);
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const local = utcMs(year, month, day, hour, minute, second);
  if (local === undefined) return undefined;
  const [sign, offsetHours, offsetMinutes] = [match[7], Number(match[8] ?? 0), Number(match[9] ?? 0)];
  if (offsetHours > 23 || offsetMinutes > 59) return undefined;
  const ms = local - (sign === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
  return inYears(ms) ? ms : undefined;
}

/** ms -> "2026-06-01 08:00:00" (UTC); the time must be in years 0001..9999. */
export function sqlTime(ms: number): string {
  if (!inYears(ms)) throw new RangeError(`${new Date(ms).toISOString()} is outside years ${FIRST_YEAR}..${LAST_YEAR}`);
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}`;
}

/** The last time parsed: the logs of a batch mostly share a few seconds. */
let lastCreatedAt: { text: string; ms: number | undefined } = { text: '', ms: undefined };

/** "2026-06-01 08:00:00" -> ms since the epoch (UTC), or undefined if no
 * such time in years 0001..9999 (parseSqlTime, cached). */
export function parseCreatedAt(text: string): number | undefined {
  if (text === lastCreatedAt.text) return lastCreatedAt.ms;
  const ms = parseSqlTime(text);
  lastCreatedAt = { text, ms };
  return ms;
}
