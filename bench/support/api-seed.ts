// Seeding of the API benchmark's server: a parking with boxes, and many
// drivers each with an access token, written straight to the database (the
// token endpoint would cost a scrypt check each).
import { newToken, randomKeyHex, tokenHash } from '../../api/auth/secrets.js';
import type { AppContext } from '../../api/context.js';
import type { BoxDirection } from '../../firmware-protocol/index.js';

export interface BenchParking {
  id: number;
  parkingKey: string;
  boxes: { moduleId: number; direction: BoxDirection; boxKey: string }[];
}

export function seedParking(ctx: AppContext, firstModuleId: number): BenchParking {
  const now = ctx.clock.now();
  const parkingKey = randomKeyHex();
  // Sealed on purpose, though new parkings are signed by default (issue 13):
  // the figures compare with runs from before protocol version 2.
  const id = ctx.parkingsSqlite.insert(
    {
      name: 'Bench parking',
      description: null,
      currency: 'EUR',
      pricePerHourMinor: 250,
      maxDurationMinutes: 120,
      tries: 255,
      isOnline: false,
      keys: { accessMode: 'sealed', parkingKey },
    },
    now,
  );
  const boxes = (['entrance', 'exit'] as const).map((direction, index) => {
    const moduleId = firstModuleId + index;
    const boxKey = randomKeyHex();
    const mac =
      `02:50:42:${((moduleId >> 16) & 0xff).toString(16).padStart(2, '0')}:${((moduleId >> 8) & 0xff).toString(16).padStart(2, '0')}:${(moduleId & 0xff).toString(16).padStart(2, '0')}`.toUpperCase();
    ctx.boxesSqlite.insert(
      { moduleId, parkingId: id, direction, macAddress: mac, boxKey, mqttPasswordHash: 'bench' },
      now,
    );
    return { moduleId, direction, boxKey };
  });
  return { id, parkingKey, boxes };
}

const DAY_MS = 86_400_000;

/** `count` drivers with one access token each; returns [user id, token] pairs. */
export function seedDrivers(ctx: AppContext, clientRowId: number, count: number, prefix: string): [number, string][] {
  const now = ctx.clock.now();
  const drivers: [number, string][] = [];
  // Tens of thousands of rows in one SQLite transaction, straight through the
  // connection: the repositories are async and would take one transaction each.
  const insertUser = ctx.db.prepare<[string, number]>(
    `INSERT INTO users (email, password_hash, first_name, last_name, phone, created_at)
     VALUES (?, 'bench-no-login', 'B', 'D', '1', ?)`,
  );
  const insertToken = ctx.db.prepare<[number, number, Buffer, Buffer, number, number, number]>(
    `INSERT INTO tokens (user_id, client_app_id, access_token_hash, refresh_token_hash, access_expires_at, refresh_expires_at, created_at, family_id)
     VALUES (?, ?, ?, ?, ?, ?, ?, NULL)`,
  );
  const ownFamily = ctx.db.prepare<[number]>('UPDATE tokens SET family_id = id WHERE id = ?');
  ctx.db.transaction(() => {
    for (let i = 0; i < count; i += 1) {
      const userId = Number(insertUser.run(`${prefix}${i}@bench.test`, now).lastInsertRowid);
      const token = newToken();
      const pairId = Number(
        insertToken.run(userId, clientRowId, tokenHash(token), tokenHash(newToken()), now + DAY_MS, now + DAY_MS, now)
          .lastInsertRowid,
      );
      ownFamily.run(pairId);
      drivers.push([userId, token]);
    }
  })();
  return drivers;
}
