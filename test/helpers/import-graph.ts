// The import graph of our TypeScript files, type imports included (a cycle
// through types still ties the modules together; eslint's
// import-x/no-cycle skips `import type`, and its resolver's platform
// bindings are not all on this machine's registry, which breaks `npm ci`). Imports are read with
// TypeScript's own `ts.preProcessFile`, relative specifiers resolved as
// NodeNext does for our sources (`./x.js` is `./x.ts`); packages are left out.
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/** File (relative to the root, `/`-separated) -> the files of ours it imports. */
export type ImportGraph = Map<string, string[]>;

/** The graph of `files` (path -> source text); an import that names no file of `files` is left out. */
export function importGraph(files: ReadonlyMap<string, string>): ImportGraph {
  const graph: ImportGraph = new Map();
  for (const [file, text] of files) {
    const imported = new Set<string>();
    for (const { fileName: specifier } of ts.preProcessFile(text, true, true).importedFiles) {
      if (!specifier.startsWith('.')) continue;
      const target = join(dirname(file), specifier.replace(/\.js$/, '.ts')).split('\\').join('/');
      if (files.has(target)) imported.add(target);
    }
    graph.set(file, [...imported].sort());
  }
  return graph;
}

const SKIPPED = new Set(['node_modules', 'dist', 'data', 'coverage', '.git']);

/** Every `.ts` file under `root` (but node_modules, dist, data, coverage), with its text. */
export async function sourceFiles(root: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  async function walk(dir: string): Promise<void> {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      if (SKIPPED.has(entry.name)) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await walk(path);
      else if (entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) {
        files.set(relative(resolve(root), path).split('\\').join('/'), await readFile(path, 'utf8'));
      }
    }
  }
  await walk(resolve(root));
  return files;
}

/** One cycle per strongly connected component that has one (Tarjan), each as
 * the files in import order, its first file repeated at the end. */
export function importCycles(graph: ImportGraph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  let next = 0;
  // Recursive: our graph is a few hundred files deep at most.
  function visit(file: string): void {
    index.set(file, next);
    low.set(file, next);
    next += 1;
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file) ?? 0, low.get(target) ?? 0));
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file) ?? 0, index.get(target) ?? 0));
      }
    }
    if (low.get(file) === index.get(file)) {
      const component: string[] = [];
      let member: string | undefined;
      do {
        member = stack.pop();
        if (member === undefined) break;
        onStack.delete(member);
        component.push(member);
      } while (member !== file);
      const selfImport = graph.get(file)?.includes(file) ?? false;
      if (component.length > 1 || selfImport) components.push(component);
    }
  }
  for (const file of [...graph.keys()].sort()) if (!index.has(file)) visit(file);
  return components.map((component) => cycleWithin(graph, new Set(component)));
}

/** A path from the component's first file (in sort order) back to itself, inside the component. */
function cycleWithin(graph: ImportGraph, component: ReadonlySet<string>): string[] {
  const start = [...component].sort()[0] ?? '';
  // Breadth first from start's targets back to start: the shortest cycle through it.
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const file = queue.shift() ?? '';
    for (const target of graph.get(file) ?? []) {
      if (!component.has(target)) continue;
      if (target === start) {
        const path = [file];
        for (let at = file; at !== start;) {
          at = previous.get(at) ?? start;
          path.unshift(at);
        }
        return [...path, start];
      }
      if (!previous.has(target)) {
        previous.set(target, file);
        queue.push(target);
      }
    }
  }
  return [start, start];
}
