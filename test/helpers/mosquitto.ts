// A real mosquitto (Debian's package, installed by .ci/run) on a free
// loopback port, configured with the password and ACL files that
// `parkbench admin mqtt-acl --format mosquitto` wrote. Stopped when the test ends.
// Declare the tests that use it with `testNeeding('mosquitto', test)` (requires.ts).
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import mqtt from 'mqtt';
import { freePort } from '../../lib/free-port.js';
import { messageOf } from '../../lib/message-of.js';

export interface Mosquitto {
  readonly url: string;
  /** What mosquitto wrote to stderr (its log). */
  log(): string;
  /** SIGHUP: mosquitto reads its password and ACL files again. */
  reload(): void;
}

/** Starts mosquitto with the exported files in `aclDir`; resolves once it takes a login (`probe`). */
export async function startMosquitto(
  t: ExecutionContext,
  aclDir: string,
  probe: { username: string; password: string },
): Promise<Mosquitto> {
  const port = await freePort();
  const config = join(aclDir, 'mosquitto.conf');
  // Started as root, mosquitto would drop to the user "mosquitto", who cannot
  // read a 0600 file in a private temp folder: run it as whoever runs the test.
  writeFileSync(
    config,
    [
      `user ${userInfo().username}`,
      `listener ${port} 127.0.0.1`,
      'allow_anonymous false',
      `password_file ${join(aclDir, 'passwords')}`,
      `acl_file ${join(aclDir, 'acl')}`,
      'persistence false',
      'log_dest stderr',
      '',
    ].join('\n'),
  );
  const child = spawn('mosquitto', ['-c', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr.on('data', (chunk: Buffer) => (log += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  t.teardown(async () => {
    if (!t.passed) t.log(log);
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
  });
  const url = `mqtt://127.0.0.1:${port}`;
  const deadline = Date.now() + 5_000;
  for (;;) {
    try {
      const client = await mqtt.connectAsync(url, { ...probe, reconnectPeriod: 0, connectTimeout: 1_000 });
      await client.endAsync(true);
      return { url, log: () => log, reload: () => child.kill('SIGHUP') };
    } catch (error) {
      // Still starting (connection refused); a refused login is final.
      if (typeof (error as { code?: unknown }).code === 'number' || Date.now() > deadline || child.exitCode !== null)
        throw new Error(`mosquitto did not take a login: ${messageOf(error)}\n${log}`, { cause: error });
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}
