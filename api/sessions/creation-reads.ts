// What a session's creation reads before its transaction, in one statement:
// the parking, its boxes (by module id, as BoxRepository.listOfParking) and
// the driver's open session, if any. On PostgreSQL each statement is a round
// trip whose socket write costs the API more than the statement itself
// (docs/benchmarks.md); three reads were three. The boxes come as a JSON
// array, every column a number, a string or null, so JSON loses nothing.
import { sql } from 'kysely';
import type { BoxRow } from '../repositories/boxes.js';
import type { ParkingRow } from '../repositories/parkings.js';
import type { SessionRow } from '../repositories/sessions.js';
import { CompiledOnce, type Dialect, type Executor, type Store } from '../db/store.js';

export interface CreationReads {
  parking: ParkingRow;
  boxes: BoxRow[];
  /** The driver's session that is not finished (at most one: parking_sessions_one_open). */
  openSession: Pick<SessionRow, 'id' | 'state'> | undefined;
}

/** Every column of a box, by name: the keys of the JSON objects SQLite builds. */
const BOX_COLUMNS: Record<keyof BoxRow, true> = {
  id: true,
  module_id: true,
  parking_id: true,
  direction: true,
  mac_address: true,
  box_key: true,
  mqtt_username: true,
  mqtt_password_hash: true,
  skew_seconds: true,
  min_battery_mv: true,
  next_control_seq: true,
  created_at: true,
  last_seen_at: true,
  last_box_seq: true,
  last_box_time: true,
  box_time_drift_seconds: true,
  battery_mv: true,
  last_control_seq: true,
  simulated: true,
};

/** The parking's boxes as a JSON array, ordered by module id: parsed by the pg driver, text on SQLite. */
function boxesJson(dialect: Dialect) {
  if (dialect === 'postgres')
    return sql<
      BoxRow[] | string
    >`(SELECT coalesce(json_agg(b ORDER BY b.module_id), '[]') FROM boxes b WHERE b.parking_id = secured_parkings.id)`;
  const pairs = sql.join(Object.keys(BOX_COLUMNS).map((column) => sql`${sql.lit(column)}, b.${sql.ref(column)}`));
  return sql<
    BoxRow[] | string
  >`(SELECT coalesce(json_group_array(json_object(${pairs}) ORDER BY b.module_id), '[]') FROM boxes b WHERE b.parking_id = secured_parkings.id)`;
}

export class CreationReader {
  readonly #read;

  constructor(store: Pick<Store, 'kysely' | 'dialect'>) {
    const openOfUser = store.kysely
      .selectFrom('parking_sessions')
      .where('user_id', '=', 0)
      .where('state', '<>', 'finished');
    // Its values bound in `read`'s order: the user twice, then the parking.
    this.#read = new CompiledOnce(
      store.kysely
        .selectFrom('secured_parkings')
        .selectAll('secured_parkings')
        .select([
          boxesJson(store.dialect).as('boxes_json'),
          openOfUser.select('id').as('open_session_id'),
          openOfUser.select('state').as('open_session_state'),
        ])
        .where('secured_parkings.id', '=', 0),
    );
  }

  /** undefined when there is no such parking. */
  async read(parkingId: number, userId: number, on: Executor): Promise<CreationReads | undefined> {
    const [row] = await this.#read.run(on, [userId, 'finished', userId, 'finished', parkingId]);
    if (row === undefined) return undefined;
    const { boxes_json: boxesJsonValue, open_session_id: openId, open_session_state: openState, ...parking } = row;
    const boxes = typeof boxesJsonValue === 'string' ? (JSON.parse(boxesJsonValue) as BoxRow[]) : boxesJsonValue;
    const openSession = openId !== null && openState !== null ? { id: openId, state: openState } : undefined;
    return { parking, boxes, openSession };
  }
}
