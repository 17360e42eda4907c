// The command driver runs the bench's shell lines through /bin/sh, as
// labgrid's ExternalPowerDriver does: their order, the bench's own cycle
// command, and a failing or hanging command as one PowerError line (a hang
// killed, with what it started, after timeout_ms: real small timeouts, as
// a child process must really be killed).
import test, { type ExecutionContext } from 'ava';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock } from '../../lib/clock.js';
import { CommandPowerDriver, type CommandPowerOptions } from '../../lib/power/command-driver.js';
import { PowerError } from '../../lib/power/power-driver.js';
import { waitFor } from '../helpers/wait.js';

async function folder(t: ExecutionContext): Promise<string> {
  const path = await mkdtemp(join(tmpdir(), 'pb-power-command-'));
  t.teardown(() => rm(path, { recursive: true, force: true }));
  return path;
}

function driver(options: Partial<CommandPowerOptions> & Pick<CommandPowerOptions, 'on' | 'off'>): CommandPowerDriver {
  return new CommandPowerDriver({ timeoutMs: 5_000, settleMs: 0, offMs: 20, clock: systemClock, ...options });
}

test('on and off run their shell lines; cycle without its own line is off, then on', async (t) => {
  const dir = await folder(t);
  const log = join(dir, 'log');
  const power = driver({ on: `echo on >> ${log}`, off: `echo off >> '${log}'`, settleMs: 750 });
  t.is(power.settleMs, 750);
  t.is(power.description, `command (on: echo on >> ${log}; off: echo off >> '${log}')`);
  await power.on();
  await power.off();
  await power.cycle();
  t.is(await readFile(log, 'utf8'), 'on\noff\noff\non\n');
});

test("cycle runs the bench's own cycle line when there is one", async (t) => {
  const dir = await folder(t);
  const log = join(dir, 'log');
  await driver({ on: 'false', off: 'false', cycle: `echo cycle >> ${log}` }).cycle();
  t.is(await readFile(log, 'utf8'), 'cycle\n');
});

test('a command that fails: one line with the command, its exit code and its last stderr line', async (t) => {
  const power = driver({ on: 'echo starting >&2; echo "relay board not found" >&2; exit 3', off: 'true' });
  const error = await t.throwsAsync(power.on(), { instanceOf: PowerError });
  t.is(
    error.message,
    '`echo starting >&2; echo "relay board not found" >&2; exit 3` exit code 3: relay board not found',
  );
  await t.throwsAsync(driver({ on: 'true', off: 'exit 1' }).off(), { message: '`exit 1` exit code 1' });
});

test('a command that hangs is killed after timeout_ms, with what it started, and says so', async (t) => {
  const dir = await folder(t);
  const pidFile = join(dir, 'pid');
  const power = driver({ on: `sleep 30 & echo $! > ${pidFile}; wait`, off: 'true', timeoutMs: 300 });
  const started = Date.now();
  await t.throwsAsync(power.on(), {
    instanceOf: PowerError,
    message: `\`sleep 30 & echo $! > ${pidFile}; wait\` did not finish within 300 ms (timeout_ms), killed`,
  });
  t.true(Date.now() - started < 5_000);
  const pid = Number(await readFile(pidFile, 'utf8'));
  // The sleep the shell started went with it (the process group was killed).
  await waitFor(() => {
    try {
      process.kill(pid, 0);
      return false;
    } catch {
      return true;
    }
  }, 'the sleep the command started to be gone');
  t.pass();
});
