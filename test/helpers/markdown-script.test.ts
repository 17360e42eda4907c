// markedScript: the sh blocks between a document's markers, and an error
// rather than an empty script.
import test from 'ava';
import { markedScript } from './markdown-script.js';

const fence = '```';

test('joins the sh blocks between the markers, in order, and nothing outside them', (t) => {
  const markdown = [
    `${fence}sh`,
    'echo before',
    fence,
    '<!-- walk: begin, a note -->',
    `${fence}sh`,
    'echo one',
    fence,
    'Prose.',
    `${fence}json`,
    '{"not": "shell"}',
    fence,
    `${fence}sh`,
    '# a comment',
    'echo two',
    fence,
    '<!-- walk: end -->',
    `${fence}sh`,
    'echo after',
    fence,
  ].join('\n');
  t.is(markedScript(markdown, 'walk'), 'echo one\n# a comment\necho two\n');
});

test('missing markers, an unclosed block or no command: an error', (t) => {
  t.throws(() => markedScript(`${fence}sh\necho x\n${fence}\n`, 'walk'), { message: /no "<!-- walk: begin"/ });
  t.throws(() => markedScript('<!-- walk: end -->\n<!-- walk: begin -->\n', 'walk'), {
    message: /no "<!-- walk: begin"/,
  });
  t.throws(() => markedScript(`<!-- walk: begin -->\n${fence}sh\necho x\n<!-- walk: end -->\n`, 'walk'), {
    message: /not closed/,
  });
  t.throws(
    () => markedScript(`<!-- walk: begin -->\n${fence}sh\n# only a comment\n\n${fence}\n<!-- walk: end -->\n`, 'walk'),
    {
      message: /no command/,
    },
  );
  t.throws(() => markedScript('<!-- walk: begin -->\nProse only.\n<!-- walk: end -->\n', 'walk'), {
    message: /no command/,
  });
});
