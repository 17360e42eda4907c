// `--limits FILE`: a YAML list of limit expressions, at the top or under
// `limits:` (the bench file's key), one `- expr` a line, quoted or not;
// comments and blank lines allowed. Only that subset of YAML: anything else
// is refused with its line, rather than read some other way.
import { LimitError, parseLimit, type Limit } from './limits.js';

export function parseLimitsFile(text: string, name: string): Limit[] {
  const limits: Limit[] = [];
  const lines = text.split(/\r?\n/);
  for (const [index, raw] of lines.entries()) {
    const line = raw.replace(/(^|\s)#.*$/, '').trimEnd();
    if (line.trim() === '' || (index === firstContentLine(lines) && /^limits:\s*$/.test(line))) continue;
    const item = /^\s*-\s+(.*)$/.exec(line);
    if (item === null) throw new LimitError(`${name} line ${index + 1}: not a list item "- expression"`);
    const expression = unquote((item[1] ?? '').trim());
    try {
      limits.push(parseLimit(expression));
    } catch (error) {
      if (error instanceof LimitError) throw new LimitError(`${name} line ${index + 1}: ${error.message}`);
      throw error;
    }
  }
  if (limits.length === 0) throw new LimitError(`${name}: no limit in it (a YAML list of expressions)`);
  return limits;
}

function firstContentLine(lines: readonly string[]): number {
  return lines.findIndex((line) => line.replace(/(^|\s)#.*$/, '').trim() !== '');
}

function unquote(text: string): string {
  const quoted = /^(['"])(.*)\1$/.exec(text);
  return quoted === null ? text : (quoted[2] ?? '');
}
