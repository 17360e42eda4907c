// A real mosquitto (Debian's package, installed by .ci/run) on a free
// loopback port, configured with the password and ACL files that
// `parkbench admin mqtt-acl --format mosquitto` wrote (testkit/mosquitto.ts).
// Stopped when the test ends; its log shown when the test failed.
// Declare the tests that use it with `testNeeding('mosquitto', test)` (requires.ts).
import type { ExecutionContext } from 'ava';
import { startMosquittoServer, type MosquittoServer } from '../../testkit/mosquitto.js';

export type Mosquitto = Omit<MosquittoServer, 'stop'>;

/** Starts mosquitto with the exported files in `aclDir`; resolves once it
 * takes a login (`probe`). `settings`: more lines of mosquitto.conf. */
export async function startMosquitto(
  t: ExecutionContext,
  aclDir: string,
  probe: { username: string; password: string },
  settings: readonly string[] = [],
): Promise<Mosquitto> {
  const server = await startMosquittoServer(aclDir, probe, settings);
  t.teardown(async () => {
    if (!t.passed) t.log(server.log());
    await server.stop();
  });
  return server;
}
