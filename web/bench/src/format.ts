// Small text formats of the page: times, durations, millivolts. Pure functions.

// What Date#toLocaleTimeString([], { hour12: false }) gives, made once:
// toLocaleTimeString builds a formatter at every call, and clockTime runs
// for every box-log row and card (perf/dashboard.ts profiled it first).
let timeFormat: Intl.DateTimeFormat | undefined;

/** `HH:MM:SS` of an ISO time, in the browser's zone; the text as given when it does not parse. */
export function clockTime(iso: string | null | undefined): string {
  if (iso === null || iso === undefined) return '-';
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return iso;
  timeFormat ??= new Intl.DateTimeFormat([], { hour: 'numeric', minute: 'numeric', second: 'numeric', hour12: false });
  return timeFormat.format(ms);
}

let dayTimeFormat: Intl.DateTimeFormat | undefined;

/** `23 Nov, 14:03:12` of an ISO time, in the browser's zone (a time that may
 * be another day than today); the text as given when it does not parse. */
export function dayTime(iso: string): string {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return iso;
  dayTimeFormat ??= new Intl.DateTimeFormat([], {
    day: 'numeric',
    month: 'short',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
    hour12: false,
  });
  return dayTimeFormat.format(ms);
}

/** "12 s ago", "3 min ago", "2 h ago" from `nowMs`; "never" for null. */
export function ago(iso: string | null | undefined, nowMs: number): string {
  if (iso === null || iso === undefined) return 'never';
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return iso;
  const seconds = Math.max(0, Math.round((nowMs - ms) / 1000));
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 48 * 3600) return `${Math.floor(seconds / 3600)} h ago`;
  return `${Math.floor(seconds / 86400)} d ago`;
}

/** A run's length: "850 ms", "12.3 s", "4 min 05 s", "1 h 02 min". */
export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '-';
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.floor(ms / 1000);
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${String(seconds % 60).padStart(2, '0')} s`;
  return `${Math.floor(seconds / 3600)} h ${String(Math.floor(seconds / 60) % 60).padStart(2, '0')} min`;
}

/** A signed difference with its unit: "+12 ms", "-3 ms", "0 ms"; "-" when unknown. */
export function signed(value: number | null | undefined, unit = ''): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '-';
  const rounded = Math.round(value * 100) / 100;
  return `${rounded > 0 ? '+' : ''}${rounded}${unit === '' ? '' : ` ${unit}`}`;
}

/** An http or https URL as the browser would follow it; null for any other text (javascript:, data:, ...). */
export function httpLink(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
}

/** A clock drift in seconds, signed, with its unit. */
export function drift(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '-';
  const sign = seconds > 0 ? '+' : '';
  if (Math.abs(seconds) < 120) return `${sign}${seconds} s`;
  return `${sign}${(seconds / 60).toFixed(1)} min`;
}

export function volts(mv: number | null | undefined): string {
  return mv === null || mv === undefined ? '-' : `${(mv / 1000).toFixed(2)} V`;
}

/**
 * A box log's latency (received_at minus created_at) at the resolution it
 * has: created_at is whole seconds (`YYYY-MM-DD HH:MM:SS`), so the exchange
 * happened up to a second after it and the latency is below the next whole
 * second, "< 1 s", "< 2 s", ... Milliseconds would read the created_at's
 * truncation as delay: logs of one second showing 80 to 900 ms.
 */
export function latency(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '-';
  return `< ${Math.max(0, Math.floor(ms / 1000)) + 1} s`;
}
