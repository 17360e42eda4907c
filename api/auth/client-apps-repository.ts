// Client applications (the spec's client_app_id / client_secret).
import type { Selectable } from 'kysely';
import type { ClientAppsTable } from '../db/schema.js';
import type { Store } from '../db/store.js';

const COLUMNS = ['id', 'name', 'client_app_id', 'client_secret_hash'] as const;

export type ClientAppRow = Pick<Selectable<ClientAppsTable>, (typeof COLUMNS)[number]>;

export class ClientAppRepository {
  constructor(private readonly store: Store) {}

  /** Undefined for an id holding U+0000: no client has one, and
   * PostgreSQL's text refuses it with an error (registration looks the
   * client up before the body's NUL check, api/http/nul-characters.ts). */
  async findByClientAppId(clientAppId: string): Promise<ClientAppRow | undefined> {
    if (clientAppId.includes('\0')) return undefined;
    return this.store.kysely
      .selectFrom('client_apps')
      .select(COLUMNS)
      .where('client_app_id', '=', clientAppId)
      .executeTakeFirst();
  }

  findById(id: number): Promise<ClientAppRow | undefined> {
    return this.store.kysely.selectFrom('client_apps').select(COLUMNS).where('id', '=', id).executeTakeFirst();
  }

  async insert(name: string, clientAppId: string, secretHash: string, nowMs: number): Promise<number> {
    const row = await this.store.kysely
      .insertInto('client_apps')
      .values({ name, client_app_id: clientAppId, client_secret_hash: secretHash, created_at: nowMs })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }
}
