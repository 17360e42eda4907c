// Secured parkings. Money in integer minor units; parking keys as 32 hex
// digits, issuer keys as hex (docs/protocol.md, Keys; migration 8).
import type { Insertable, Kysely, Selectable } from 'kysely';
import type { Schema, SecuredParkingsTable } from '../db/schema.js';
import { CompiledOnce, type Executor, type Store } from '../db/store.js';

export type ParkingRow = Selectable<SecuredParkingsTable>;

/** docs/protocol.md, Keys: access commands sealed under K_park (version 1
 * firmware) or signed by the parking's issuer key pair. */
export type AccessMode = SecuredParkingsTable['access_mode'];

/** The keys a new parking starts with. */
export type NewParkingKeys =
  | { accessMode: 'sealed'; parkingKey: string }
  | { accessMode: 'signed'; issuerPrivateKey: string; issuerPublicKey: string };

export interface NewParking {
  name: string;
  description: string | null;
  currency: string;
  pricePerHourMinor: number;
  maxDurationMinutes: number;
  tries: number;
  isOnline: boolean;
  keys: NewParkingKeys;
}

export class ParkingRepository {
  readonly #kysely: Kysely<Schema>;
  readonly #byId: CompiledOnce<ParkingRow>;

  constructor(store: Store) {
    this.#kysely = store.kysely;
    // Read per request (sessions, smart keys): compiled once.
    this.#byId = new CompiledOnce(this.#kysely.selectFrom('secured_parkings').selectAll().where('id', '=', 0));
  }

  async findById(id: number, on: Executor = this.#kysely): Promise<ParkingRow | undefined> {
    return (await this.#byId.run(on, [id]))[0];
  }

  async insert(parking: NewParking, nowMs: number, on: Executor = this.#kysely): Promise<number> {
    const row = await on
      .insertInto('secured_parkings')
      .values(parkingValues(parking, nowMs))
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  /** Unverified box logs stay home unless `forwardUnverified` says otherwise. */
  async setForwarding(
    id: number,
    url: string,
    expose: boolean,
    secret: string,
    options: { forwardUnverified?: boolean } = {},
    on: Executor = this.#kysely,
  ): Promise<void> {
    await on
      .updateTable('secured_parkings')
      .set({
        forwarding_url: url,
        forwarding_expose: expose ? 1 : 0,
        forwarding_secret: secret,
        forwarding_unverified: options.forwardUnverified === true ? 1 : 0,
      })
      .where('id', '=', id)
      .execute();
  }

  /** A new forwarding secret; `previous` keeps signing until `previousUntil` (ms), or none. */
  async setForwardingSecret(
    id: number,
    secret: string,
    previous: { secret: string; until: number } | null,
    on: Executor = this.#kysely,
  ): Promise<void> {
    await on
      .updateTable('secured_parkings')
      .set({
        forwarding_secret: secret,
        forwarding_previous_secret: previous?.secret ?? null,
        forwarding_previous_secret_until: previous?.until ?? null,
      })
      .where('id', '=', id)
      .execute();
  }
}

function parkingValues(parking: NewParking, nowMs: number): Insertable<SecuredParkingsTable> {
  const { keys } = parking;
  return {
    name: parking.name,
    description: parking.description,
    currency: parking.currency,
    price_per_hour_minor: parking.pricePerHourMinor,
    max_duration_minutes: parking.maxDurationMinutes,
    tries: parking.tries,
    is_online: parking.isOnline ? 1 : 0,
    access_mode: keys.accessMode,
    parking_key: keys.accessMode === 'sealed' ? keys.parkingKey : null,
    issuer_private_key: keys.accessMode === 'signed' ? keys.issuerPrivateKey : null,
    issuer_public_key: keys.accessMode === 'signed' ? keys.issuerPublicKey : null,
    created_at: nowMs,
  };
}
