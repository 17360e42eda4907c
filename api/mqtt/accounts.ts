// MQTT accounts: every box has one (made by `parkbench admin box add`), and
// gateways and operators get theirs from `parkbench admin mqtt-client add`.
// The API's own account on an external broker comes from MQTT_USERNAME and
// MQTT_PASSWORD; on the embedded broker the API needs none.
import type { Selectable } from 'kysely';
import type { MqttClientsTable } from '../db/schema.js';
import type { Store } from '../db/store.js';
import type { MqttAccount } from './acl.js';
import { verifyMqttPassword } from '../auth/index.js';

export type ClientRole = MqttClientsTable['role'];

const CLIENT_COLUMNS = ['name', 'role', 'username', 'password_hash'] as const;

export type MqttClientRow = Pick<Selectable<MqttClientsTable>, (typeof CLIENT_COLUMNS)[number]>;

export class MqttAccountRepository {
  constructor(private readonly store: Store) {}

  findClient(username: string): Promise<MqttClientRow | undefined> {
    return this.store.kysely
      .selectFrom('mqtt_clients')
      .select(CLIENT_COLUMNS)
      .where('username', '=', username)
      .executeTakeFirst();
  }

  async addClient(client: MqttClientRow, nowMs: number): Promise<void> {
    await this.store.kysely
      .insertInto('mqtt_clients')
      .values({ ...client, created_at: nowMs })
      .execute();
  }

  /** Replaces a client's password hash (a fresh password was issued). */
  async setClientPasswordHash(username: string, passwordHash: string): Promise<void> {
    await this.store.kysely
      .updateTable('mqtt_clients')
      .set({ password_hash: passwordHash })
      .where('username', '=', username)
      .execute();
  }

  /** The account behind a login, or null when the username is unknown or
   * the password does not match. */
  async authenticate(username: string, password: string): Promise<MqttAccount | null> {
    const box = await this.store.kysely
      .selectFrom('boxes')
      .select(['module_id', 'mqtt_password_hash'])
      .where('mqtt_username', '=', username)
      .executeTakeFirst();
    if (box !== undefined)
      return (await verifyMqttPassword(password, box.mqtt_password_hash))
        ? { role: 'box', username, moduleId: box.module_id }
        : null;
    const client = await this.findClient(username);
    if (client !== undefined)
      return (await verifyMqttPassword(password, client.password_hash)) ? { role: client.role, username } : null;
    return null;
  }

  /** Every account with its stored hash, boxes first: for the mosquitto export. */
  async listWithHashes(): Promise<{ account: MqttAccount; passwordHash: string }[]> {
    const boxes = await this.store.kysely
      .selectFrom('boxes')
      .select(['module_id', 'mqtt_username', 'mqtt_password_hash'])
      .orderBy('module_id')
      .execute();
    const clients = await this.store.kysely
      .selectFrom('mqtt_clients')
      .select(CLIENT_COLUMNS)
      .orderBy('username')
      .execute();
    return [
      ...boxes.map((box) => ({
        account: { role: 'box' as const, username: box.mqtt_username, moduleId: box.module_id },
        passwordHash: box.mqtt_password_hash,
      })),
      ...clients.map((client) => ({
        account: { role: client.role, username: client.username },
        passwordHash: client.password_hash,
      })),
    ];
  }
}
