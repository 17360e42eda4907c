// `parkbench reserve` and `release` as real child processes against the
// real API (listening, SQLite, system clock): a token on stdout, --json,
// renewal, release; two reserves with --wait at once: one gets the box at
// once, the other waits in the queue and gets it at the first's release,
// with its own token; a third whose wait ends exits 3 naming the holder;
// Ctrl-C during a wait leaves the queue.
import test from 'ava';
import { startCli } from '../helpers/cli-process.js';
import { runCli } from '../helpers/run-cli.js';
import { operatorService, type OperatorService } from '../helpers/operator-service.js';
import { waitFor } from '../helpers/wait.js';

interface ReservationView {
  module_id: number;
  holder: string;
  note: string | null;
  expires_at: string;
  ttl_seconds: number;
  queue: { holder: string; note: string | null }[];
}

async function reservationOf(service: OperatorService): Promise<ReservationView | null> {
  const response = await service.call('GET', `/api/operator/boxes/${service.moduleId}/reservation`);
  if (response.statusCode !== 200) throw new Error(`GET reservation: ${response.statusCode} ${response.body}`);
  return response.json<{ reservation: ReservationView | null }>().reservation;
}

test('reserve prints the token alone; --json the answer; --token renews; release frees the box', async (t) => {
  const service = await operatorService(t);
  const box = String(service.moduleId);
  const taken = await runCli(['reserve', '--box', box, '--ttl', '30m', '--note', 'CI job 1'], { env: service.env() });
  t.is(taken.code, 0, taken.stderr);
  t.regex(taken.stdout, /^[A-Za-z0-9_-]{43}\n$/, 'the token, base64url of 32 bytes, alone on its line');
  const token = taken.stdout.trim();
  t.false(taken.stderr.includes(service.token), "the operator's token is never printed");
  t.like(await reservationOf(service), { holder: 'ci', note: 'CI job 1', ttl_seconds: 1800, queue: [] });

  const again = await runCli(['reserve', '--box', box, '--ttl', '30m'], { env: service.env() });
  t.is(again.code, 3, 'held (by its own operator, without the token): exit 3 at once without --wait');
  t.regex(again.stderr, new RegExp(`^parkbench: box ${box} is reserved by ci \\(CI job 1\\) until \\S+\\n$`));

  const renewed = await runCli(['reserve', '--box', box, '--ttl', '2h', '--json', '--token', token], {
    env: service.env(),
  });
  t.is(renewed.code, 0, renewed.stderr);
  const view = JSON.parse(renewed.stdout) as ReservationView & { token: string };
  t.like(view, { module_id: service.moduleId, holder: 'ci', ttl_seconds: 7200 });
  t.true(Date.parse(view.expires_at) > Date.now() + 7_000_000, 'expires 2 h from now');

  const released = await runCli(['release', '--box', box, '--token', token], { env: service.env() });
  t.is(released.code, 0, released.stderr);
  t.is(released.stdout, '');
  t.is(await reservationOf(service), null);
  const twice = await runCli(['release', '--box', box], { env: service.env({ PARKBENCH_RESERVATION: token }) });
  t.is(twice.code, 1, 'a token that is no live reservation: refused, one line');
  t.is(twice.stderr.trim().split('\n').length, 1, twice.stderr);
});

test('two reserves with --wait at once: one gets the box, the other at its release with its own token; a third whose wait ends exits 3 naming the holder', async (t) => {
  const service = await operatorService(t);
  const box = String(service.moduleId);
  const args = ['reserve', '--box', box, '--ttl', '5m', '--wait', '1m'];
  const first = startCli(t, args, service.env());
  const second = startCli(
    t,
    [...args, '--note', 'second'],
    service.env({ PARKBENCH_OPERATOR_TOKEN: service.aliceToken }),
  );
  const winner = await Promise.race([
    first.waitForLine(/^\S+$/, 20_000).then((token) => ({ token, process: first, other: second })),
    second.waitForLine(/^\S+$/, 20_000).then((token) => ({ token, process: second, other: first })),
  ]);
  t.is(await winner.process.exited, 0);
  await waitFor(async () => (await reservationOf(service))?.queue.length === 1, 'the other in the queue', 10_000);
  const held = await reservationOf(service);
  t.is(winner.other.child.exitCode, null, 'the other still waits');

  const third = await runCli([...args.slice(0, -1), '1s'], { env: service.env() });
  t.is(third.code, 3, third.stderr);
  t.regex(third.stderr, new RegExp(`reserved by ${held?.holder ?? '?'}`));
  t.is(third.stderr.trim().split('\n').length, 1);

  const released = await runCli(['release', '--box', box, '--token', winner.token], {
    env: service.env(winner.process === first ? {} : { PARKBENCH_OPERATOR_TOKEN: service.aliceToken }),
  });
  t.is(released.code, 0, released.stderr);
  const token = await winner.other.waitForLine(/^\S+$/, 10_000);
  t.is(await winner.other.exited, 0, winner.other.stderr.join('\n'));
  t.not(token, winner.token, 'its own token');
  t.like(await reservationOf(service), { holder: winner.process === first ? 'alice' : 'ci', queue: [] });
});

test('Ctrl-C during the wait: exit 130, and the service drops the place in the queue', async (t) => {
  const service = await operatorService(t);
  const box = String(service.moduleId);
  const taken = await runCli(['reserve', '--box', box, '--ttl', '5m'], { env: service.env() });
  t.is(taken.code, 0, taken.stderr);
  const waiting = startCli(t, ['reserve', '--box', box, '--ttl', '5m', '--wait', '10m'], service.env());
  await waitFor(async () => (await reservationOf(service))?.queue.length === 1, 'the wait in the queue', 10_000);
  t.is(await waiting.stop('SIGINT'), 130);
  t.regex(waiting.stderr.join('\n'), /interrupted \(SIGINT\); left the queue/);
  await waitFor(async () => (await reservationOf(service))?.queue.length === 0, 'the queue empty', 10_000);
});
