// `(error as Error).message` is refused by eslint.config.js (a thrown value
// may be no Error at all): lib/message-of.ts `messageOf(error)` takes its place.
// Each snippet is linted as a file of the repository through its own config
// (helpers/lint-snippet.ts).
import test from 'ava';
import { messageOf } from '../../lib/message-of.js';
import { snippetLinter } from '../helpers/lint-snippet.js';

const syntaxMessages = snippetLinter('no-restricted-syntax');

const casts: [filePath: string, code: string][] = [
  ['lib/x.ts', 'try { f(); } catch (error) { console.log((error as Error).message); }'],
  ['cli/commands/x.ts', 'export const f = (error: unknown) => `failed: ${(error as Error)?.message}`;'],
  [
    'test/api/x.test.ts',
    "const outcome = { reason: new Error('x') as unknown };\nconsole.log((outcome.reason as Error).message);",
  ],
  ['api/x.ts', "const err = { message: 'x' };\nexport const m = (err as unknown as Error).message;"],
];
for (const [filePath, code] of casts) {
  test(`${filePath} may not read (… as Error).message: ${code}`, async (t) => {
    const messages = await syntaxMessages(filePath, code);
    t.is(messages.length, 1, messages.join('\n'));
    t.regex(messages[0] ?? '', /^no-restricted-syntax: .*messageOf/);
  });
}

test('messageOf(error) and other casts pass', async (t) => {
  const code = [
    "import { messageOf } from '../lib/message-of.js';",
    'try { f(); } catch (error) { console.log(messageOf(error)); }',
    'export const e = (value: unknown) => (value as Error).name;',
    'export const m = (value: unknown) => (value as { message: string }).message;',
  ].join('\n');
  t.deepEqual(await syntaxMessages('api/x.ts', code), []);
});

test('messageOf reads an Error, and anything else thrown', (t) => {
  t.is(messageOf(new TypeError('bad port')), 'bad port');
  t.is(messageOf('plain string'), 'plain string');
  t.is(messageOf(42), '42');
  t.is(messageOf(undefined), 'undefined');
  t.is(messageOf({ code: 'EBUSY' }), '[object Object]');
});
