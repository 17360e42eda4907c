// `parkbench sim` as a signed parking's box (docs/protocol.md, version 2), a real
// child process on a real broker: its provisioning file has parking_key null
// and issuer_key set; ACCESS_SIGNED, REVOKE and SET_ISSUER arrive over MQTT;
// a SIGKILL and a restart keep the issuer keys and the revocation list.
import test, { type ExecutionContext } from 'ava';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt, { type MqttClient } from 'mqtt';
import { Topics } from '../../lib/mqtt-topics.js';
import { parseResponse, statusName, verifyResponse } from '../../firmware-protocol/index.js';
import { parseProvisioning } from '../../lib/provisioning-file.js';
import { brokerForTest } from '../helpers/broker.js';
import { startCli } from '../helpers/cli-process.js';
import { newIssuer, revoke, setIssuer, signedAccess, type IssuerKeyPair } from '../helpers/signed-box.js';
import { waitFor } from '../helpers/wait.js';

const topics = new Topics();
const MODULE_ID = 9801;

function signedBoxFile(issuer: IssuerKeyPair, url: string): Record<string, unknown> {
  // The fields of docs/protocol.md's provisioning file, as `parkbench admin box provision` writes them for a signed parking.
  return {
    module_id: MODULE_ID,
    parking_id: 7,
    direction: 'entrance',
    mac_address: '00:07:80:AA:98:01',
    parking_key: null,
    parking_key_next: null,
    issuer_key: issuer.publicKey.toString('hex'),
    issuer_key_previous: null,
    box_key: randomBytes(16).toString('hex'),
    skew_seconds: 120,
    min_battery_mv: 3300,
    mqtt: { url, username: `box-${MODULE_ID}`, password: 'pw' },
  };
}

/** An operator on the broker: sends a command, waits for its response, checks it, gives its status name. */
async function operator(
  t: ExecutionContext,
  url: string,
  boxKey: Buffer,
): Promise<(command: Buffer) => Promise<string>> {
  const client: MqttClient = await mqtt.connectAsync(url);
  t.teardown(() => client.endAsync(true));
  const responses = new Map<string, Buffer>();
  client.on('message', (_topic, payload) => {
    const message = JSON.parse(payload.toString()) as { command: string; response: string };
    responses.set(message.command, Buffer.from(message.response, 'base64'));
  });
  await client.subscribeAsync(topics.box(MODULE_ID, 'response'), { qos: 1 });
  return async (command) => {
    const key = command.toString('base64');
    await client.publishAsync(topics.box(MODULE_ID, 'command'), JSON.stringify({ command: key }), { qos: 1 });
    await waitFor(() => responses.has(key), 'the response', 10_000);
    const response = responses.get(key) ?? Buffer.alloc(0);
    t.true(verifyResponse(response, boxKey, command), "the box's response, bound to this command");
    return statusName(parseResponse(response).status) ?? 'unknown';
  };
}

test("a signed parking's box over MQTT: ACCESS_SIGNED OK, REVOKE then REVOKED, SET_ISSUER rotation; all of it survives a SIGKILL", async (t) => {
  const broker = await brokerForTest(t);
  const directory = await mkdtemp(join(tmpdir(), 'pb-sim-signed-'));
  t.teardown(() => rm(directory, { recursive: true, force: true }));
  const old = newIssuer();
  const next = newIssuer();
  const file = signedBoxFile(old, broker.url);
  const path = join(directory, 'box.json');
  await writeFile(path, JSON.stringify(file));
  const box = parseProvisioning(file);
  const send = await operator(t, broker.url, box.boxKey);
  const nowSeconds = Math.floor(Date.now() / 1000);
  const args = ['sim', '--box', path, '--state-dir', join(directory, 'state'), '--log-level', 'warn'];

  const first = startCli(t, args);
  await first.waitForLine(/^parkbench sim ready /);
  t.is(await send(signedAccess(box, old, { nowSeconds, keyId: 42 })), 'OK');
  t.is(await send(revoke(box, 1, [{ keyId: 42, until: nowSeconds + 3_600 }])), 'OK');
  t.is(await send(signedAccess(box, old, { nowSeconds, keyId: 42 })), 'REVOKED');
  t.is(await send(setIssuer(box, 2, next.publicKey, old.publicKey)), 'OK');
  t.is(await send(signedAccess(box, next, { nowSeconds, keyId: 43 })), 'OK');
  t.is(await send(signedAccess(box, old, { nowSeconds, keyId: 44 })), 'OK', 'the previous issuer during the rotation');
  t.is(await send(setIssuer(box, 3, next.publicKey, null)), 'OK');
  t.is(await first.stop('SIGKILL'), 'SIGKILL');

  // The provisioning file still names the old issuer: the box's own state wins over it.
  const second = startCli(t, args);
  await second.waitForLine(/^parkbench sim ready /);
  t.is(await send(signedAccess(box, old, { nowSeconds, keyId: 45 })), 'AUTH_FAILED', 'the old issuer is gone');
  t.is(await send(signedAccess(box, next, { nowSeconds, keyId: 42 })), 'REVOKED', 'the revocation is still there');
  t.is(await send(signedAccess(box, next, { nowSeconds, keyId: 46 })), 'OK');
  t.is(await send(setIssuer(box, 3, old.publicKey, null)), 'REPLAY');
  t.is(await second.stop('SIGTERM'), 0);
});

test('parkbench sim --bug accept-revoked and --bug accept-any-signature are taken; a bad issuer_key is one line and exit code 2', async (t) => {
  const broker = await brokerForTest(t);
  const directory = await mkdtemp(join(tmpdir(), 'pb-sim-signed-'));
  t.teardown(() => rm(directory, { recursive: true, force: true }));
  const issuer = newIssuer();
  const file = signedBoxFile(issuer, broker.url);
  const path = join(directory, 'box.json');
  await writeFile(path, JSON.stringify(file));
  const box = parseProvisioning(file);
  const send = await operator(t, broker.url, box.boxKey);
  const nowSeconds = Math.floor(Date.now() / 1000);
  const sim = startCli(t, [
    'sim',
    '--box',
    path,
    '--memory-state',
    '--bug',
    'accept-revoked',
    '--bug',
    'accept-any-signature',
    '--log-level',
    'warn',
  ]);
  await sim.waitForLine(/^parkbench sim ready /);
  t.is(await send(revoke(box, 1, [{ keyId: 42, until: nowSeconds + 3_600 }])), 'OK');
  t.is(await send(signedAccess(box, issuer, { nowSeconds, keyId: 42 })), 'OK', 'accept-revoked');
  t.is(await send(signedAccess(box, newIssuer(), { nowSeconds, keyId: 43 })), 'OK', 'accept-any-signature');
  t.is(await sim.stop('SIGTERM'), 0);

  const bad = join(directory, 'bad.json');
  await writeFile(bad, JSON.stringify({ ...file, issuer_key: '00'.repeat(64) }));
  const refused = startCli(t, ['sim', '--box', bad, '--memory-state']);
  t.is(await refused.exited, 2);
  t.regex(refused.stderr.join('\n'), /^parkbench: \S*bad\.json: issuer_key: is not a point on P-256$/);
});
