// The name of a case's capture file (--capture-dir): its row in the report,
// two digits at least, then its name made safe for any file system, so the
// files sort as the report does and no two cases share one:
// `03-not-before-just-inside-the-skew.pcapng`.

/** Longest part of the name taken from the case's name, in characters. */
const MAX_NAME_LENGTH = 80;

export function caseFileName(row: number, caseName: string): string {
  const safe = caseName
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, MAX_NAME_LENGTH)
    .replace(/^-+|-+$/g, '');
  return `${String(row).padStart(2, '0')}-${safe === '' ? 'case' : safe}.pcapng`;
}
