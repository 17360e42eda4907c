// The prompt driver: the person at the bench is asked on the terminal and
// presses Enter; with no terminal on stdin nobody can, and every call is
// PowerUnavailable (the power-cycle case is skipped with its reason).
import test from 'ava';
import { PassThrough } from 'node:stream';
import { powerDriverFor, powerUnavailable } from '../../lib/power/drivers.js';
import { PowerUnavailable } from '../../lib/power/power-driver.js';
import { NO_TERMINAL, PromptPowerDriver } from '../../lib/power/prompt-driver.js';

function terminal(isTTY: boolean): {
  input: PassThrough & { isTTY?: boolean };
  output: PassThrough;
  said: () => string;
} {
  const input: PassThrough & { isTTY?: boolean } = Object.assign(new PassThrough(), { isTTY });
  const output = new PassThrough();
  let text = '';
  output.on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  return { input, output, said: () => text };
}

test('asks on the terminal and goes on once Enter is pressed', async (t) => {
  const tty = terminal(true);
  const power = new PromptPowerDriver({ settleMs: 3_000, box: 'box 4242', input: tty.input, output: tty.output });
  t.is(powerUnavailable(power), undefined);
  const cycled = power.cycle();
  await new Promise((resolve) => setImmediate(resolve));
  t.is(tty.said(), 'parkbench: switch box 4242 OFF, then ON again, then press Enter\n');
  tty.input.write('\n');
  await cycled;
  const off = power.off();
  tty.input.write('\n');
  await off;
  t.regex(tty.said(), /switch box 4242 OFF, then press Enter\n$/);
  t.is(power.settleMs, 3_000);
});

test('without a terminal: PowerUnavailable, and the factory says why', async (t) => {
  const pipe = terminal(false);
  const power = powerDriverFor(
    { driver: 'prompt', settleMs: 0, offMs: 0, timeoutMs: 1 },
    { moduleId: 4242, input: pipe.input, output: pipe.output },
  );
  t.is(powerUnavailable(power), NO_TERMINAL);
  await t.throwsAsync(power.on(), { instanceOf: PowerUnavailable, message: NO_TERMINAL });
  t.is(pipe.said(), '');
});

test('stdin closed before Enter: PowerUnavailable', async (t) => {
  const tty = terminal(true);
  const power = new PromptPowerDriver({ settleMs: 0, box: 'box 1', input: tty.input, output: tty.output });
  const on = power.on();
  tty.input.end();
  await t.throwsAsync(on, { instanceOf: PowerUnavailable, message: /stdin closed before Enter/ });
});
