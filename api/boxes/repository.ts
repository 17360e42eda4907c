// Boxes (access-point modules) of the secured parkings.
import type { BoxDirection } from '../../firmware-protocol/index.js';
import type { Insertable, Kysely, Selectable } from 'kysely';
import type { BoxesTable, Schema } from '../db/schema.js';
import { CompiledOnce, greatest, type Dialect, type Executor, type Store } from '../db/store.js';

export type BoxRow = Selectable<BoxesTable>;

export interface NewBox {
  moduleId: number;
  parkingId: number;
  direction: BoxDirection;
  macAddress: string;
  boxKey: string;
  mqttPasswordHash: string;
  /** Played by parkbench's simulator; a box is real unless said so. */
  simulated?: boolean;
}

/** A new box's skew_seconds and min_battery_mv: the defaults of the boxes
 * table (api/db/migrations/, version 1), the same as a provisioning file's. */
export { DEFAULT_MIN_BATTERY_MV, DEFAULT_SKEW_SECONDS } from '../../lib/provisioning-file.js';

export function mqttUsernameFor(moduleId: number): string {
  return `box-${moduleId}`;
}

export class BoxRepository {
  readonly #kysely: Kysely<Schema>;
  readonly #dialect: Dialect;
  readonly #byModule: CompiledOnce<BoxRow>;
  readonly #ofParking: CompiledOnce<BoxRow>;

  constructor(store: Store) {
    this.#kysely = store.kysely;
    this.#dialect = store.dialect;
    // Read per MQTT login and per request (box logs, sessions): compiled once.
    this.#byModule = new CompiledOnce(this.#kysely.selectFrom('boxes').selectAll().where('module_id', '=', 0));
    this.#ofParking = new CompiledOnce(
      this.#kysely.selectFrom('boxes').selectAll().where('parking_id', '=', 0).orderBy('module_id'),
    );
  }

  async findByModuleId(moduleId: number, on: Executor = this.#kysely): Promise<BoxRow | undefined> {
    return (await this.#byModule.run(on, [moduleId]))[0];
  }

  findByMac(mac: string, on: Executor = this.#kysely): Promise<BoxRow | undefined> {
    return on.selectFrom('boxes').selectAll().where('mac_address', '=', mac).executeTakeFirst();
  }

  listAll(on: Executor = this.#kysely): Promise<BoxRow[]> {
    return on.selectFrom('boxes').selectAll().orderBy('module_id').execute();
  }

  listOfParking(parkingId: number, on: Executor = this.#kysely): Promise<BoxRow[]> {
    return this.#ofParking.run(on, [parkingId]);
  }

  async countOf(parkingId: number, on: Executor = this.#kysely): Promise<number> {
    const row = await on
      .selectFrom('boxes')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('parking_id', '=', parkingId)
      .executeTakeFirst();
    return row?.count ?? 0;
  }

  /** The highest module id registered, or null when there is no box. */
  async highestModuleId(on: Executor = this.#kysely): Promise<number | null> {
    const row = await on
      .selectFrom('boxes')
      .select((eb) => eb.fn.max('module_id').as('highest'))
      .executeTakeFirst();
    return row?.highest ?? null;
  }

  async insert(box: NewBox, nowMs: number, on: Executor = this.#kysely): Promise<number> {
    const row = await on.insertInto('boxes').values(boxValues(box, nowMs)).returning('id').executeTakeFirstOrThrow();
    return row.id;
  }

  async setMqttPasswordHash(moduleId: number, hash: string, on: Executor = this.#kysely): Promise<void> {
    await on.updateTable('boxes').set({ mqtt_password_hash: hash }).where('module_id', '=', moduleId).execute();
  }

  /** What a verified response tells about its box; ignored when an answer
   * with a later box_seq was already seen (offline logs arrive late). One
   * conditional UPDATE: of two at once, the newer box_seq stays whatever
   * their order (PostgreSQL re-checks the condition on the row the other changed). */
  async noteObservation(observation: BoxObservation, on: Executor = this.#kysely): Promise<void> {
    await on
      .updateTable('boxes')
      .set({
        last_seen_at: observation.seenAt,
        last_box_seq: observation.boxSeq,
        last_box_time: observation.boxTime,
        ...(observation.driftSeconds === null ? {} : { box_time_drift_seconds: observation.driftSeconds }),
        battery_mv: observation.batteryMv,
      })
      .where('module_id', '=', observation.moduleId)
      .where((eb) => eb.or([eb('last_box_seq', 'is', null), eb('last_box_seq', '<', observation.boxSeq)]))
      .execute();
  }

  /** docs/protocol.md, after step 11: the service moves next_control_seq past any control
   * sequence echoed in a response; `accepted` (status OK) also records it as
   * the box's last accepted one. One UPDATE of the row's own values (greatest): concurrent ones only ever raise them. */
  async noteControlSequence(
    moduleId: number,
    sequence: number,
    accepted: boolean,
    on: Executor = this.#kysely,
  ): Promise<void> {
    await on
      .updateTable('boxes')
      .set((eb) => ({
        next_control_seq: greatest(this.#dialect, eb.ref('next_control_seq'), eb.val(sequence + 1)),
        ...(accepted
          ? {
              last_control_seq: greatest(
                this.#dialect,
                eb.fn.coalesce('last_control_seq', eb.val(0)),
                eb.val(sequence),
              ),
            }
          : {}),
      }))
      .where('module_id', '=', moduleId)
      .execute();
  }

  /** What the service learned of a box (null before any verified response). */
  learned(moduleId: number, on: Executor = this.#kysely): Promise<LearnedState | undefined> {
    return on.selectFrom('boxes').select(LEARNED).where('module_id', '=', moduleId).executeTakeFirst();
  }
}

const LEARNED = [
  'last_seen_at',
  'last_box_seq',
  'last_box_time',
  'box_time_drift_seconds',
  'battery_mv',
  'last_control_seq',
  'next_control_seq',
] as const;

function boxValues(box: NewBox, nowMs: number): Insertable<BoxesTable> {
  return {
    module_id: box.moduleId,
    parking_id: box.parkingId,
    direction: box.direction,
    mac_address: box.macAddress,
    box_key: box.boxKey,
    mqtt_username: mqttUsernameFor(box.moduleId),
    mqtt_password_hash: box.mqttPasswordHash,
    simulated: box.simulated === true ? 1 : 0,
    created_at: nowMs,
  };
}

export interface BoxObservation {
  moduleId: number;
  /** When the response was produced (the log's created_at), ms. */
  seenAt: number;
  boxSeq: number;
  /** Unix seconds. */
  boxTime: number;
  /** box_time minus the time seen, seconds; null when the exchange cannot time the box's clock (the last value stays). */
  driftSeconds: number | null;
  batteryMv: number;
}

export interface LearnedState {
  last_seen_at: number | null;
  last_box_seq: number | null;
  last_box_time: number | null;
  box_time_drift_seconds: number | null;
  battery_mv: number | null;
  last_control_seq: number | null;
  next_control_seq: number;
}
