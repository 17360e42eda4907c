// The help text says what --box means with and without --bench, and that
// `power cycle` waits the box's settle_ms.
import test from 'ava';
import { runCli } from '../helpers/run-cli.js';

/** The help text with its wrapping undone. */
async function help(...args: string[]): Promise<string> {
  const result = await runCli([...args, '--help']);
  return result.stdout.replace(/\s+/g, ' ');
}

test('conformance --help: --box is the provisioning file, or with --bench the module_id', async (t) => {
  const text = await help('conformance');
  t.regex(text, /--bench <file> the bench file \(bench\.yaml\)/);
  t.regex(
    text,
    /--box <file\|module_id> the box's provisioning file .* with --bench, the box's module_id in the bench file \(a bench of one box may leave it out\)/,
  );
});

test('power --help: the actions, the flags, and that cycle waits settle_ms', async (t) => {
  const text = await help('power');
  t.regex(text, /Usage: parkbench power \[options\] <action>/);
  t.regex(text, /--bench <file>/);
  t.regex(text, /--box <module_id>/);
  t.regex(text, /--json/);
  t.regex(text, /cycle: off, then on .* then waits the box's settle_ms/);
});

test('gateway --help: --bench', async (t) => {
  t.regex(
    await help('gateway'),
    /--bench <file> the bench file \(bench\.yaml\): bridge every box of it on a serial port or BLE/,
  );
});
