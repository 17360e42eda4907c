// The message of anything thrown, for the one line a CLI prints or a log
// record carries. A `catch` binding is `unknown`: a package may throw a string
// or a plain object, and `(error as Error).message` then reads undefined
// (eslint.config.js forbids that cast).

/** `error.message` of an Error; anything else as `String(error)`. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
