// MQTT accounts of gateways and operators, and the access rules exported for
// an external mosquitto. Boxes' accounts are made with the boxes
// (api/boxes/).
import { hashMqttPassword, isMosquittoHash, randomSecret, verifyMqttPassword } from '../auth/index.js';
import type { Store } from '../db/store.js';
import { conflict, refused } from '../http/domain-error.js';
import type { Topics } from '../../lib/mqtt-topics.js';
import { MqttAcl, type MqttAccount } from './acl.js';
import { MqttAccountRepository, type ClientRole } from './accounts.js';

export interface AddedMqttClient {
  name: string;
  role: ClientRole;
  mqtt_username: string;
  mqtt_password: string;
}

const ROLE_PREFIX: Record<ClientRole, string> = { gateway: 'gw', operator: 'op' };

/** A username from the name: `gw-bench-1` for a gateway named "Bench 1". It
 * is also the gateway's id in its topics, so only [a-z0-9-]. */
export function mqttUsernameOf(role: ClientRole, name: string): string {
  const slug = name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 48);
  return `${ROLE_PREFIX[role]}-${slug === '' ? 'client' : slug}`;
}

/** A new account; its password is returned once (stored hashed). */
export async function addMqttClient(
  store: Store,
  name: string,
  role: ClientRole,
  nowMs: number,
): Promise<AddedMqttClient> {
  const accounts = new MqttAccountRepository(store);
  const username = mqttUsernameOf(role, name);
  if ((await accounts.findClient(username)) !== undefined)
    throw conflict(`an MQTT client ${username} already exists: choose another --name`);
  const password = randomSecret(24);
  await accounts.addClient({ name, role, username, password_hash: hashMqttPassword(password) }, nowMs);
  return { name, role, mqtt_username: username, mqtt_password: password };
}

/** An operator account with a fresh password: made, or its password replaced
 * (the bench's own operator, issued again at each start). */
export async function ensureOperatorClient(
  store: Store,
  name: string,
  username: string,
  nowMs: number,
): Promise<{ username: string; password: string }> {
  const accounts = new MqttAccountRepository(store);
  const password = randomSecret(18);
  if ((await accounts.findClient(username)) === undefined) {
    await accounts.addClient({ name, role: 'operator', username, password_hash: hashMqttPassword(password) }, nowMs);
  } else {
    await accounts.setClientPasswordHash(username, hashMqttPassword(password));
  }
  return { username, password };
}

/** Whether the operator client `username` exists and takes `password` (a
 * password kept from an earlier start of the bench on an external broker). */
export async function operatorClientTakes(store: Store, username: string, password: string): Promise<boolean> {
  const account = await new MqttAccountRepository(store).findClient(username);
  return account !== undefined && (await verifyMqttPassword(password, account.password_hash));
}

export interface MosquittoExport {
  passwords: string;
  acl: string;
  accounts: number;
}

/** The mosquitto password file (the stored $7$ hashes, as they are) and ACL
 * file of every account, plus the API's own from MQTT_USERNAME/MQTT_PASSWORD. */
export async function mosquittoExport(
  store: Store,
  topics: Topics,
  api: { username: string; password: string } | undefined,
): Promise<MosquittoExport> {
  const entries = await new MqttAccountRepository(store).listWithHashes();
  const accounts: MqttAccount[] = entries.map((entry) => entry.account);
  const passwordLines: string[] = [];
  for (const entry of entries) {
    if (!isMosquittoHash(entry.passwordHash)) {
      throw refused(
        `${entry.account.username} has a password hash mosquitto cannot read (made before MQTT passwords were stored for mosquitto): run \`parkbench admin box provision\` for that box`,
      );
    }
    passwordLines.push(`${entry.account.username}:${entry.passwordHash}`);
  }
  if (api !== undefined) {
    accounts.push({ role: 'api', username: api.username });
    passwordLines.push(`${api.username}:${hashMqttPassword(api.password)}`);
  }
  return {
    passwords: `${passwordLines.join('\n')}\n`,
    acl: new MqttAcl(topics).mosquittoAcl(accounts),
    accounts: accounts.length,
  };
}
