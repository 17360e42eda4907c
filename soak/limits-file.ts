// `--limits FILE`: a YAML list of limit expressions (the `yaml` package),
// at the top or under `limits:` as the bench file has it; comments, quotes
// and flow lists as YAML allows. A problem is one line naming the file and
// the line: a YAML error, no list, an item that is no expression.
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node } from 'yaml';
import { LimitError, parseLimit, type Limit } from './limits.js';

export function parseLimitsFile(text: string, name: string): Limit[] {
  const lines = new LineCounter();
  const document = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const [syntax] = document.errors;
  if (syntax !== undefined) {
    const at = lines.linePos(syntax.pos[0]);
    throw new LimitError(`${name} line ${at.line}: ${syntax.message.split('\n')[0] ?? 'not YAML'}`);
  }
  const list = listIn(document.contents);
  if (list === null) throw new LimitError(`${name}: no limit in it (a YAML list of expressions)`);
  if (!isSeq(list))
    throw new LimitError(`${name} line ${lineOf(list, lines)}: not a list of expressions (nor limits: and one)`);
  const limits = list.items.map((item) => {
    const line = isScalar(item) || isMap(item) || isSeq(item) ? lineOf(item, lines) : 1;
    if (!isScalar(item) || typeof item.value !== 'string')
      throw new LimitError(`${name} line ${line}: not a limit expression (measure.statistic OP number)`);
    try {
      return parseLimit(item.value);
    } catch (error) {
      if (error instanceof LimitError) throw new LimitError(`${name} line ${line}: ${error.message}`);
      throw error;
    }
  });
  if (limits.length === 0) throw new LimitError(`${name}: no limit in it (a YAML list of expressions)`);
  return limits;
}

/** The list itself, or what `limits:` holds when the file is a mapping of that key alone. */
function listIn(contents: unknown): Node | null {
  if (contents === null || contents === undefined) return null;
  if (isMap(contents) && contents.items.length === 1) {
    const [pair] = contents.items;
    if (pair !== undefined && isScalar(pair.key) && pair.key.value === 'limits') {
      const value = pair.value;
      return isScalar(value) && value.value === null ? null : (value as Node | null);
    }
  }
  return contents as Node;
}

function lineOf(node: Node, lines: LineCounter): number {
  return node.range === undefined || node.range === null ? 1 : lines.linePos(node.range[0]).line;
}
