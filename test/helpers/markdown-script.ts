// The shell script a document holds: its fenced `sh` blocks between two
// HTML comments, `<!-- NAME: begin ... -->` and `<!-- NAME: end -->`, joined
// in order. A document without both markers, or with no command between
// them, is an error: a test running the script must not pass on nothing.

/** Whether a line of a shell block runs something (not blank, not a comment). */
function isCommand(line: string): boolean {
  const trimmed = line.trim();
  return trimmed !== '' && !trimmed.startsWith('#');
}

export function markedScript(markdown: string, name: string): string {
  const lines = markdown.split('\n');
  const begin = lines.findIndex((line) => line.startsWith(`<!-- ${name}: begin`));
  const end = lines.findIndex((line) => line.startsWith(`<!-- ${name}: end`));
  if (begin === -1 || end === -1 || end < begin) {
    throw new Error(`no "<!-- ${name}: begin" marker followed by a "<!-- ${name}: end" marker`);
  }
  const script: string[] = [];
  let inBlock = false;
  for (const line of lines.slice(begin + 1, end)) {
    if (!inBlock && line === '```sh') inBlock = true;
    else if (inBlock && line === '```') inBlock = false;
    else if (inBlock) script.push(line);
  }
  if (inBlock) throw new Error(`a \`\`\`sh block between the ${name} markers is not closed`);
  if (!script.some(isCommand)) throw new Error(`no command in a \`\`\`sh block between the ${name} markers`);
  return `${script.join('\n')}\n`;
}
