// A mosquitto (Debian's package) on a free loopback port, configured with
// the password and ACL files `parkbench admin mqtt-acl --format mosquitto`
// wrote: the external broker of the tests and of `npm run perf:processes`.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { freePort } from '../lib/free-port.js';
import { messageOf } from '../lib/message-of.js';

export interface MosquittoServer {
  readonly url: string;
  /** What mosquitto wrote to stderr (its log). */
  log(): string;
  /** SIGHUP: mosquitto reads its password and ACL files again. */
  reload(): void;
  /** Resolves once mosquitto has added a subscription of `clientId` to a
   * topic filter starting with `filterStart` (it routes to it from then on). */
  subscribed(clientId: string, filterStart: string, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/** Starts mosquitto with the exported files in `aclDir`; resolves once it
 * takes a login (`probe`). `settings`: more lines of mosquitto.conf (a
 * `max_packet_size`, say). */
export async function startMosquittoServer(
  aclDir: string,
  probe: { username: string; password: string },
  settings: readonly string[] = [],
): Promise<MosquittoServer> {
  const port = await freePort();
  const config = join(aclDir, 'mosquitto.conf');
  // Started as root, mosquitto would drop to the user "mosquitto", who cannot
  // read a 0600 file in a private temp folder: run it as whoever runs it here.
  writeFileSync(
    config,
    [
      `user ${userInfo().username}`,
      `listener ${port} 127.0.0.1`,
      'allow_anonymous false',
      `password_file ${join(aclDir, 'passwords')}`,
      `acl_file ${join(aclDir, 'acl')}`,
      'persistence false',
      // mosquitto's default, 1,000 messages queued for a client beyond those
      // in flight, drops the rest of a burst of responses (40 boxes x 250)
      // before the API has stored them: what docs/beyond-one-machine.md asks
      // of an operator's broker.
      'max_queued_messages 100000',
      'log_dest stderr',
      // The default types, and the subscriptions (`subscribed` below).
      'log_type error',
      'log_type warning',
      'log_type notice',
      'log_type information',
      'log_type subscribe',
      ...settings,
      '',
    ].join('\n'),
  );
  const child = spawn('mosquitto', ['-c', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr.on('data', (chunk: Buffer) => (log += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
  };
  const url = `mqtt://127.0.0.1:${port}`;
  const deadline = Date.now() + 5_000;
  for (;;) {
    try {
      const client = await mqtt.connectAsync(url, { ...probe, reconnectPeriod: 0, connectTimeout: 1_000 });
      await client.endAsync(true);
      const subscribed = async (clientId: string, filterStart: string, timeoutMs = 30_000): Promise<void> => {
        // mosquitto's subscribe log line: "<time>: <client id> <qos> <filter>".
        const line = `: ${clientId} 1 ${filterStart}`;
        const deadline = Date.now() + timeoutMs;
        while (!log.includes(line)) {
          if (Date.now() > deadline || child.exitCode !== null)
            throw new Error(`mosquitto saw no subscription of ${clientId} to ${filterStart}...\n${log}`);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      };
      return { url, log: () => log, reload: () => child.kill('SIGHUP'), subscribed, stop };
    } catch (error) {
      // Still starting (connection refused); a refused login is final.
      if (typeof (error as { code?: unknown }).code === 'number' || Date.now() > deadline || child.exitCode !== null) {
        await stop();
        throw new Error(`mosquitto did not take a login: ${messageOf(error)}\n${log}`, { cause: error });
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}
