// Lints a snippet as if it were a file of the repository (`lintText` with a
// `filePath` that need not exist), through the repository's own
// eslint.config.js, with one rule only and without type information: a
// virtual file is in no TypeScript project.
import { ESLint } from 'eslint';
import { fileURLToPath } from 'node:url';
import tseslint from 'typescript-eslint';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** `(filePath, code)` -> the messages of rule `ruleId`, as `rule: message`. */
export function snippetLinter(ruleId: string): (filePath: string, code: string) => Promise<string[]> {
  const eslint = new ESLint({
    cwd: root,
    overrideConfig: { files: ['**/*.ts'], ...tseslint.configs.disableTypeChecked },
    ruleFilter: (rule) => rule.ruleId === ruleId,
  });
  return async (filePath, code) => {
    const [result] = await eslint.lintText(code, { filePath });
    return (result?.messages ?? []).map((message) => `${message.ruleId ?? 'fatal'}: ${message.message}`);
  };
}
