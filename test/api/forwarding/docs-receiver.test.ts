// The receiver docs/operations.md (Forwarding) gives, run as written in its
// own process with the standardwebhooks package: it accepts (204) what the
// worker sends and refuses (401) a delivery under another secret, so the
// docs stay true.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import test from 'ava';
import { newWebhookSecret } from '../../../api/forwarding/signature.js';
import { rotateForwardingSecret } from '../../../api/forwarding/parking-settings.js';
import { forwardingSetup, logs, send } from '../../helpers/forwarding.js';
import { freePort } from '../../../lib/free-port.js';
import { waitFor } from '../../helpers/wait.js';

const root = new URL('../../../', import.meta.url).pathname;

function docsReceiver(): string {
  const text = readFileSync(`${root}docs/operations.md`, 'utf8');
  const section = text.slice(text.indexOf('\n## Forwarding\n'));
  const code = /```js\n([\s\S]*?)```/.exec(section)?.[1];
  if (code === undefined) throw new Error('no js block in the Forwarding section');
  return code;
}

test('the documented receiver accepts our deliveries (204) and refuses another secret (401)', async (t) => {
  const code = docsReceiver();
  t.true(code.includes('.listen(4000)'));
  const port = await freePort();
  const s = await forwardingSetup(t, `http://127.0.0.1:${port}/hook`);
  const child = spawn(
    process.execPath,
    ['--input-type=module', '-e', code.replace('.listen(4000)', `.listen(${port})`)],
    {
      cwd: root, // resolves standardwebhooks from the repository's node_modules
      env: { ...process.env, FORWARDING_SECRET: s.secret },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  t.teardown(() => child.kill());
  await waitFor(
    async () =>
      (await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: '' }).catch(() => undefined))?.status === 401,
    'the receiver listens',
    10_000,
  );

  await send(s, logs(s, 2));
  await s.app.ctx.forwarding.runOnce();
  t.like((await s.app.ctx.outbox.status())[0], { delivered: 2, last_error: null }, output);
  await waitFor(() => output.includes(' 2 box logs'), 'the receiver printed the delivery');
  t.regex(output, /^[0-9a-f-]{36} 2 box logs$/m, 'webhook-id and the records');

  // Signed with a secret the receiver does not hold: 401, retried later.
  await s.app.ctx.parkings.setForwardingSecret(s.parking.id, newWebhookSecret(), null);
  s.app.clock.advance(1_000); // the status's last error is the latest attempt's
  await send(s, logs(s, 1));
  await s.app.ctx.forwarding.runOnce();
  t.like((await s.app.ctx.outbox.status())[0], { pending: 1, last_error: 'HTTP 401' });
  // A rotation signing with both: the receiver, still on its secret, accepts.
  await s.app.ctx.parkings.setForwardingSecret(s.parking.id, s.secret, null);
  await rotateForwardingSecret(s.app.ctx.store, s.parking.id, 1, s.app.clock.now());
  s.app.clock.advance(6_000);
  await s.app.ctx.forwarding.runOnce();
  t.like((await s.app.ctx.outbox.status())[0], { pending: 0, delivered: 3 });
});
