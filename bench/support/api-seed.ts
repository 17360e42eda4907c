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
  const id = ctx.parkings.insert(
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
    ctx.boxes.insert({ moduleId, parkingId: id, direction, macAddress: mac, boxKey, mqttPasswordHash: 'bench' }, now);
    return { moduleId, direction, boxKey };
  });
  return { id, parkingKey, boxes };
}

/** `count` drivers with one access token each; returns [user id, token] pairs. */
export function seedDrivers(ctx: AppContext, clientRowId: number, count: number, prefix: string): [number, string][] {
  const now = ctx.clock.now();
  const drivers: [number, string][] = [];
  ctx.db.transaction(() => {
    for (let i = 0; i < count; i += 1) {
      const userId = ctx.users.insert(
        {
          email: `${prefix}${i}@bench.test`,
          passwordHash: 'bench-no-login',
          firstName: 'B',
          lastName: 'D',
          phone: '1',
        },
        now,
      );
      if (userId === undefined) throw new Error('bench driver exists');
      const token = newToken();
      ctx.tokens.insert(
        {
          userId,
          clientAppRowId: clientRowId,
          accessHash: tokenHash(token),
          refreshHash: tokenHash(newToken()),
          accessExpiresAt: now + 86_400_000,
          refreshExpiresAt: now + 86_400_000,
        },
        now,
      );
      drivers.push([userId, token]);
    }
  })();
  return drivers;
}
