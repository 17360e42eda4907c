// Opaque page cursors: what a page's `next_cursor` holds, base64url of a
// prefix naming the list and its version, then the position of the last
// item shown. A cursor is checked by its prefix and by the reader of its
// position, so one made by another list, or by hand, is refused (the route
// answers 422 validation_failed naming `cursor`).

/** The cursor of `position` in the list whose cursors start with `prefix` (such as `bl1.`). */
export function encodeCursor(prefix: string, position: string): string {
  return Buffer.from(`${prefix}${position}`, 'utf8').toString('base64url');
}

/** The position inside a cursor of that list, or undefined when it is not one. */
export function cursorPosition(prefix: string, cursor: string): string | undefined {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  return text.startsWith(prefix) ? text.slice(prefix.length) : undefined;
}
