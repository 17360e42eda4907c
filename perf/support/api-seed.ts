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

export async function seedParking(ctx: AppContext, firstModuleId: number): Promise<BenchParking> {
  const now = ctx.clock.now();
  const parkingKey = randomKeyHex();
  // Sealed on purpose, though new parkings are signed by default:
  // the figures compare with runs from before protocol version 2.
  const id = await ctx.parkings.insert(
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
  const boxes: BenchParking['boxes'] = [];
  for (const [index, direction] of (['entrance', 'exit'] as const).entries()) {
    const moduleId = firstModuleId + index;
    const boxKey = randomKeyHex();
    const mac =
      `02:50:42:${((moduleId >> 16) & 0xff).toString(16).padStart(2, '0')}:${((moduleId >> 8) & 0xff).toString(16).padStart(2, '0')}:${(moduleId & 0xff).toString(16).padStart(2, '0')}`.toUpperCase();
    await ctx.boxes.insert(
      { moduleId, parkingId: id, direction, macAddress: mac, boxKey, mqttPasswordHash: 'bench' },
      now,
    );
    boxes.push({ moduleId, direction, boxKey });
  }
  return { id, parkingKey, boxes };
}

const DAY_MS = 86_400_000;

/** Rows a multi-row insert takes at once (PostgreSQL's limit of 65,535
 * parameters; SQLite's of 32,766 since 3.32). */
const CHUNK = 500;

/** `count` drivers with one access token each; returns [user id, token] pairs. */
export async function seedDrivers(
  ctx: AppContext,
  clientRowId: number,
  count: number,
  prefix: string,
): Promise<[number, string][]> {
  const now = ctx.clock.now();
  const drivers: [number, string][] = [];
  // Tens of thousands of rows: one transaction, multi-row inserts of CHUNK
  // (the repositories take one statement a row).
  await ctx.store.kysely.transaction().execute(async (trx) => {
    for (let start = 0; start < count; start += CHUNK) {
      const size = Math.min(CHUNK, count - start);
      const users = await trx
        .insertInto('users')
        .values(
          Array.from({ length: size }, (_, i) => ({
            email: `${prefix}${start + i}@bench.test`,
            password_hash: 'bench-no-login',
            first_name: 'B',
            last_name: 'D',
            phone: '1',
            created_at: now,
          })),
        )
        .returning(['id', 'email'])
        .execute();
      // RETURNING's order is the VALUES' order on both engines; the email says so anyway.
      const byEmail = new Map(users.map((user) => [user.email, user.id]));
      const tokens = Array.from({ length: size }, (_, i) => {
        const userId = byEmail.get(`${prefix}${start + i}@bench.test`) ?? 0;
        return { userId, token: newToken() };
      });
      const pairs = await trx
        .insertInto('tokens')
        .values(
          tokens.map(({ userId, token }) => ({
            user_id: userId,
            client_app_id: clientRowId,
            access_token_hash: tokenHash(token),
            refresh_token_hash: tokenHash(newToken()),
            access_expires_at: now + DAY_MS,
            refresh_expires_at: now + DAY_MS,
            created_at: now,
            family_id: null,
          })),
        )
        .returning('id')
        .execute();
      // Each pair its own family (as a password grant makes it).
      await trx
        .updateTable('tokens')
        .set((eb) => ({ family_id: eb.ref('id') }))
        .where(
          'id',
          'in',
          pairs.map((pair) => pair.id),
        )
        .execute();
      for (const { userId, token } of tokens) drivers.push([userId, token]);
    }
  });
  return drivers;
}
