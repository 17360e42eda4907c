// The operator token, kept for this tab only (sessionStorage). A token in the
// address's fragment (`/bench#token=...`, what `parkbench start` prints) logs
// in at once and leaves the address bar; a fragment never reaches a server.
const KEY = 'parkbench.operator-token';

export function takeTokenFromFragment(): string | null {
  const fragment = new URLSearchParams(window.location.hash.replace(/^#/, ''));
  const token = fragment.get('token');
  if (token === null) return null;
  window.history.replaceState(null, '', window.location.pathname + window.location.search);
  return token === '' ? null : token;
}

export function storedToken(): string | null {
  return window.sessionStorage.getItem(KEY);
}

export function storeToken(token: string): void {
  window.sessionStorage.setItem(KEY, token);
}

export function forgetToken(): void {
  window.sessionStorage.removeItem(KEY);
}
