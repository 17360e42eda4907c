// What a session's creation reads before its transaction: the parking, its
// boxes (by module id, as BoxRepository.listOfParking) and the driver's open
// session, if any. On PostgreSQL in one statement: each statement is a round
// trip whose socket write costs the API more than the statement itself
// (docs/benchmarks.md). The boxes come as a JSON array, every column a
// number, a string or null, so JSON loses nothing. On SQLite the
// repositories' three reads.
import { sql } from 'kysely';
import type { BoxRepository, BoxRow } from '../boxes/index.js';
import type { ParkingRepository, ParkingRow } from '../parkings/index.js';
import type { SessionRepository, SessionRow } from './repository.js';
import { CompiledOnce, type Executor, type Store } from '../db/store.js';

export interface CreationReads {
  parking: ParkingRow;
  boxes: BoxRow[];
  /** The driver's session that is not finished (at most one: parking_sessions_one_open). */
  openSession: Pick<SessionRow, 'id' | 'state'> | undefined;
}

/** What SQLite reads with: its statements cost no round trip, and three
 * of them cost less than one that builds the boxes' JSON. */
export interface CreationReadRepositories {
  parkings: Pick<ParkingRepository, 'findById'>;
  boxes: Pick<BoxRepository, 'listOfParking'>;
  sessions: Pick<SessionRepository, 'findOpenOfUser'>;
}

/** PostgreSQL: the parking's boxes as a JSON array, ordered by module id (parsed by the pg driver). */
const BOXES_JSON = sql<
  BoxRow[]
>`(SELECT coalesce(json_agg(b ORDER BY b.module_id), '[]') FROM boxes b WHERE b.parking_id = secured_parkings.id)`;

export class CreationReader {
  readonly #repositories: CreationReadRepositories;
  /** PostgreSQL's one statement; undefined on SQLite. */
  readonly #combined;

  constructor(store: Pick<Store, 'kysely' | 'dialect'>, repositories: CreationReadRepositories) {
    this.#repositories = repositories;
    const openOfUser = store.kysely
      .selectFrom('parking_sessions')
      .where('user_id', '=', 0)
      .where('state', '<>', 'finished');
    // Its values bound in `read`'s order: the user twice, then the parking.
    const combined = new CompiledOnce(
      store.kysely
        .selectFrom('secured_parkings')
        .selectAll('secured_parkings')
        .select([
          BOXES_JSON.as('boxes_json'),
          openOfUser.select('id').as('open_session_id'),
          openOfUser.select('state').as('open_session_state'),
        ])
        .where('secured_parkings.id', '=', 0),
    );
    this.#combined = store.dialect === 'postgres' ? combined : undefined;
  }

  /** undefined when there is no such parking. */
  async read(parkingId: number, userId: number, on: Executor): Promise<CreationReads | undefined> {
    if (this.#combined === undefined) return this.#readEach(parkingId, userId, on);
    const [row] = await this.#combined.run(on, [userId, 'finished', userId, 'finished', parkingId]);
    if (row === undefined) return undefined;
    const { boxes_json: boxes, open_session_id: openId, open_session_state: openState, ...parking } = row;
    const openSession = openId !== null && openState !== null ? { id: openId, state: openState } : undefined;
    return { parking, boxes, openSession };
  }

  async #readEach(parkingId: number, userId: number, on: Executor): Promise<CreationReads | undefined> {
    const { parkings, boxes, sessions } = this.#repositories;
    const parking = await parkings.findById(parkingId, on);
    if (!parking) return undefined;
    const parkingBoxes = await boxes.listOfParking(parking.id, on);
    const open = await sessions.findOpenOfUser(userId, on);
    return { parking, boxes: parkingBoxes, openSession: open && { id: open.id, state: open.state } };
  }
}
