// `parkbench admin demo`: idempotent demo data. The first run creates a
// signed parking "Demo parking" (EUR, 2.50/h, 120 min, 10 tries) with an entrance and
// an exit box, a client app and a driver; later runs print the same
// credentials. The demo client secret and driver password are kept in clear
// in the `demo` table so they can be printed again: demo data only.
import type { Command } from 'commander';
import { BoxRepository } from '../../api/repositories/boxes.js';
import { ClientAppRepository } from '../../api/repositories/client-apps.js';
import { UserRepository } from '../../api/repositories/users.js';
import { randomSecret } from '../../api/auth/secrets.js';
import { CliError } from '../errors.js';
import { addBox } from './box.js';
import { createClientApp } from './client-app.js';
import { createParking } from './parking.js';
import { createDriver } from './user.js';
import { printResult, withCommonFlags, withDatabase, type AdminContext, type CommonFlags } from './context.js';

export const DEMO_DRIVER_EMAIL = 'demo.driver@parkbench.test';
const FIRST_DEMO_MODULE_ID = 9101;

export interface DemoData {
  client_app_id: string;
  client_secret: string;
  driver: { email: string; password: string };
  parking_id: number;
  boxes: { module_id: number; direction: string; mac_address: string }[];
}

interface DemoRow {
  client_app_row_id: number;
  client_secret: string;
  user_id: number;
  driver_password: string;
  parking_id: number;
}

/** A locally administered MAC derived from the module id (02:50:42 = "PB"). */
function demoMac(moduleId: number): string {
  const hex = moduleId.toString(16).toUpperCase().padStart(6, '0').slice(-6);
  return `02:50:42:${hex.slice(0, 2)}:${hex.slice(2, 4)}:${hex.slice(4, 6)}`;
}

function read(ctx: AdminContext, row: DemoRow): DemoData {
  const client = new ClientAppRepository(ctx.db).findById(row.client_app_row_id);
  const user = new UserRepository(ctx.db).findById(row.user_id);
  if (!client || !user) throw new CliError('the demo data is incomplete (its client app or driver is missing)');
  return {
    client_app_id: client.client_app_id,
    client_secret: row.client_secret,
    driver: { email: user.email, password: row.driver_password },
    parking_id: row.parking_id,
    boxes: new BoxRepository(ctx.db)
      .listOfParking(row.parking_id)
      .map((box) => ({ module_id: box.module_id, direction: box.direction, mac_address: box.mac_address })),
  };
}

/** Module ids (and their MACs) not yet taken, from 9101 up. */
function freeModuleIds(ctx: AdminContext, count: number): number[] {
  const boxes = new BoxRepository(ctx.db);
  const ids: number[] = [];
  for (let id = FIRST_DEMO_MODULE_ID; ids.length < count; id += 1) {
    if (!boxes.findByModuleId(id) && !boxes.findByMac(demoMac(id))) ids.push(id);
  }
  return ids;
}

export async function ensureDemo(ctx: AdminContext): Promise<DemoData> {
  const select = ctx.db.prepare<[], DemoRow>('SELECT client_app_row_id, client_secret, user_id, driver_password, parking_id FROM demo WHERE id = 1');
  const existing = select.get();
  if (existing) return read(ctx, existing);

  // Hashing is async, so the rows are written one by one, then recorded in
  // `demo` last: a run interrupted half way leaves orphans, never a broken demo.
  const client = await createClientApp(ctx, 'Demo app');
  const password = randomSecret(12);
  if (new UserRepository(ctx.db).findByEmail(DEMO_DRIVER_EMAIL)) {
    throw new CliError(`${DEMO_DRIVER_EMAIL} exists but is not recorded as demo data; use another database`);
  }
  const driver = await createDriver(ctx, { email: DEMO_DRIVER_EMAIL, password, firstName: 'Demo', lastName: 'Driver', phone: '+10000000000' });
  // Signed, as new parkings are (issue 13). A demo database made by an older
  // parkbench keeps its sealed demo parking (migration 8): `start` provisions
  // its boxes with its parking key and `app` sends its sealed ACCESS.
  const parking = createParking(
    ctx,
    {
      name: 'Demo parking',
      description: 'Demo data of parkbench admin demo',
      currency: 'EUR',
      pricePerHourMinor: 250,
      maxDurationMinutes: 120,
      tries: 10,
      isOnline: false,
    },
    'signed',
  );
  const [entrance, exit] = freeModuleIds(ctx, 2) as [number, number];
  addBox(ctx, { parkingId: parking.id, moduleId: entrance, macAddress: demoMac(entrance), direction: 'entrance' });
  addBox(ctx, { parkingId: parking.id, moduleId: exit, macAddress: demoMac(exit), direction: 'exit' });
  ctx.db
    .prepare('INSERT INTO demo (id, client_app_row_id, client_secret, user_id, driver_password, parking_id) VALUES (1, ?, ?, ?, ?, ?)')
    .run(client.id, client.client_secret, driver.id, password, parking.id);
  const row = select.get();
  if (!row) throw new CliError('the demo data could not be recorded');
  return read(ctx, row);
}

export function registerDemoCommand(admin: Command): void {
  withCommonFlags(admin.command('demo').description('create demo data once (a parking with two boxes, a client app, a driver); later runs print it again'))
    .action((flags: CommonFlags) =>
      withDatabase(flags, async (ctx) => {
        printResult(flags, await ensureDemo(ctx), 'Demo data: these credentials are kept in clear in the database. Box credentials: `parkbench admin box provision --module-id N`.');
      }),
    );
}
