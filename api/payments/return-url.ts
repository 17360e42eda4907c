// The app may give the payment page a link back (`?return_url=`): only
// http(s) and the app schemes of PAYMENT_RETURN_SCHEMES (default
// parkbench-app) pass; anything a browser would run (javascript:, data:, ...)
// or that does not parse is dropped. The result is re-serialized by URL, and
// the page escapes it again when it writes it.

/** Longer return URLs are dropped. */
export const MAX_RETURN_URL_LENGTH = 2048;

export function safeReturnUrl(raw: unknown, appSchemes: readonly string[]): string | undefined {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > MAX_RETURN_URL_LENGTH) return undefined;
  // Whitespace and control characters are how scheme filters get fooled
  // ("java\tscript:"); a well-formed URL has none.
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0020\u007f-\u009f]/.test(raw)) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  const scheme = url.protocol.slice(0, -1);
  if (scheme === 'http' || scheme === 'https') return url.host === '' ? undefined : url.href;
  return appSchemes.includes(scheme) ? url.href : undefined;
}
