// Times on the wire (ARCHITECTURE.md, Conventions: ISO 8601 with an offset).
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
