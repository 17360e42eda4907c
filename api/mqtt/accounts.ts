// MQTT accounts: every box has one (made by `parkbench admin box add`), and
// gateways and operators get theirs from `parkbench admin mqtt-client add`.
// The API's own account on an external broker comes from MQTT_USERNAME and
// MQTT_PASSWORD; on the embedded broker the API needs none.
import type { Db } from '../db/open.js';
import type { MqttAccount } from './acl.js';
import { verifyMqttPassword } from './password-hash.js';

export type ClientRole = 'gateway' | 'operator';

export interface MqttClientRow {
  name: string;
  role: ClientRole;
  username: string;
  password_hash: string;
}

export class MqttAccountRepository {
  private readonly clientByUsername;
  private readonly boxByUsername;
  private readonly insertClient;
  private readonly allClients;
  private readonly allBoxes;
  private readonly clientPassword;

  constructor(db: Db) {
    this.clientByUsername = db.prepare<[string], MqttClientRow>(
      'SELECT name, role, username, password_hash FROM mqtt_clients WHERE username = ?',
    );
    this.boxByUsername = db.prepare<[string], { module_id: number; mqtt_password_hash: string }>(
      'SELECT module_id, mqtt_password_hash FROM boxes WHERE mqtt_username = ?',
    );
    this.insertClient = db.prepare<[string, string, string, string, number]>(
      'INSERT INTO mqtt_clients (name, role, username, password_hash, created_at) VALUES (?, ?, ?, ?, ?)',
    );
    this.allClients = db.prepare<[], MqttClientRow>(
      'SELECT name, role, username, password_hash FROM mqtt_clients ORDER BY username',
    );
    this.clientPassword = db.prepare<[string, string]>('UPDATE mqtt_clients SET password_hash = ? WHERE username = ?');
    this.allBoxes = db.prepare<[], { module_id: number; mqtt_username: string; mqtt_password_hash: string }>(
      'SELECT module_id, mqtt_username, mqtt_password_hash FROM boxes ORDER BY module_id',
    );
  }

  findClient(username: string): MqttClientRow | undefined {
    return this.clientByUsername.get(username);
  }

  addClient(client: MqttClientRow, nowMs: number): void {
    this.insertClient.run(client.name, client.role, client.username, client.password_hash, nowMs);
  }

  /** Replaces a client's password hash (a fresh password was issued). */
  setClientPasswordHash(username: string, passwordHash: string): void {
    this.clientPassword.run(passwordHash, username);
  }

  /** The account behind a login, or null when the username is unknown or
   * the password does not match. */
  async authenticate(username: string, password: string): Promise<MqttAccount | null> {
    const box = this.boxByUsername.get(username);
    if (box !== undefined)
      return (await verifyMqttPassword(password, box.mqtt_password_hash))
        ? { role: 'box', username, moduleId: box.module_id }
        : null;
    const client = this.clientByUsername.get(username);
    if (client !== undefined)
      return (await verifyMqttPassword(password, client.password_hash)) ? { role: client.role, username } : null;
    return null;
  }

  /** Every account with its stored hash, boxes first: for the mosquitto export. */
  listWithHashes(): { account: MqttAccount; passwordHash: string }[] {
    return [
      ...this.allBoxes.all().map((box) => ({
        account: { role: 'box' as const, username: box.mqtt_username, moduleId: box.module_id },
        passwordHash: box.mqtt_password_hash,
      })),
      ...this.allClients.all().map((client) => ({
        account: { role: client.role, username: client.username },
        passwordHash: client.password_hash,
      })),
    ];
  }
}
