// Idempotent demo data. The first run creates a parking "Demo parking"
// (EUR, 2.50/h, 120 min, 10 tries; signed unless asked for a sealed one) with
// a simulated entrance and exit box, a client app and a driver; later runs
// return the same credentials. The demo client
// secret and driver password are kept in clear in the `demo` table so they
// can be printed again: demo data only.
import { ClientAppRepository, createClientApp, createDriver, randomSecret, UserRepository } from '../auth/index.js';
import { addBox, BoxRepository } from '../boxes/index.js';
import type { Store } from '../db/store.js';
import { failed, refused } from '../http/domain-error.js';
import { createParking, type AccessMode } from '../parkings/index.js';
import { DemoRepository, type DemoRow } from './repository.js';

export const DEMO_DRIVER_EMAIL = 'demo.driver@parkbench.test';
const FIRST_DEMO_MODULE_ID = 9101;

export interface DemoData {
  client_app_id: string;
  client_secret: string;
  driver: { email: string; password: string };
  parking_id: number;
  /** Every box of the demo parking; `simulated`: `parkbench start` plays it (the demo's own two, and
   * those added with `admin box add --simulated`), else it is hardware. */
  boxes: { module_id: number; direction: string; mac_address: string; simulated: boolean }[];
}

/** A locally administered MAC derived from the module id (02:50:42 = "PB"). */
function demoMac(moduleId: number): string {
  const hex = moduleId.toString(16).toUpperCase().padStart(6, '0').slice(-6);
  return `02:50:42:${hex.slice(0, 2)}:${hex.slice(2, 4)}:${hex.slice(4, 6)}`;
}

async function read(store: Store, row: DemoRow): Promise<DemoData> {
  const client = await new ClientAppRepository(store).findById(row.client_app_row_id);
  const user = await new UserRepository(store).find(row.user_id);
  if (!client || !user) throw failed('the demo data is incomplete (its client app or driver is missing)');
  return {
    client_app_id: client.client_app_id,
    client_secret: row.client_secret,
    driver: { email: user.email, password: row.driver_password },
    parking_id: row.parking_id,
    boxes: (await new BoxRepository(store).listOfParking(row.parking_id)).map((box) => ({
      module_id: box.module_id,
      direction: box.direction,
      mac_address: box.mac_address,
      simulated: box.simulated === 1,
    })),
  };
}

/** Module ids (and their MACs) not yet taken, from 9101 up. */
async function freeModuleIds(store: Store, count: number): Promise<number[]> {
  const boxes = new BoxRepository(store);
  const ids: number[] = [];
  for (let id = FIRST_DEMO_MODULE_ID; ids.length < count; id += 1) {
    if (!(await boxes.findByModuleId(id)) && !(await boxes.findByMac(demoMac(id)))) ids.push(id);
  }
  return ids;
}

/** `scryptLog2N`: the cost of the driver's password hash (api/config.ts);
 * `accessMode`: the demo parking's when this run makes it (an existing one
 * keeps its own). */
export async function ensureDemo(
  store: Store,
  scryptLog2N: number,
  nowMs: number,
  accessMode: AccessMode = 'signed',
): Promise<DemoData> {
  const demo = new DemoRepository(store);
  const existing = await demo.find();
  if (existing) return read(store, existing);

  // Hashing is async, so the rows are written one by one, then recorded in
  // `demo` last: a run interrupted half way leaves orphans, never a broken demo.
  const client = await createClientApp(store, 'Demo app', nowMs);
  const password = randomSecret(12);
  if (await new UserRepository(store).findByEmail(DEMO_DRIVER_EMAIL)) {
    throw refused(`${DEMO_DRIVER_EMAIL} exists but is not recorded as demo data; use another database`);
  }
  const driver = await createDriver(
    store,
    { email: DEMO_DRIVER_EMAIL, password, firstName: 'Demo', lastName: 'Driver', phone: '+10000000000' },
    scryptLog2N,
    nowMs,
  );
  // Signed, as new parkings are, unless asked otherwise. A demo database made
  // by an older parkbench keeps its sealed demo parking (migration 8): `start`
  // provisions its boxes with its parking key and `app` sends its sealed ACCESS.
  const parking = await createParking(
    store,
    {
      name: 'Demo parking',
      description: 'Demo data of parkbench admin demo',
      currency: 'EUR',
      pricePerHourMinor: 250,
      maxDurationMinutes: 120,
      tries: 10,
      isOnline: false,
    },
    accessMode,
    nowMs,
  );
  const [entrance, exit] = (await freeModuleIds(store, 2)) as [number, number];
  await addBox(
    store,
    {
      parkingId: parking.id,
      moduleId: entrance,
      macAddress: demoMac(entrance),
      direction: 'entrance',
      simulated: true,
    },
    nowMs,
  );
  await addBox(
    store,
    { parkingId: parking.id, moduleId: exit, macAddress: demoMac(exit), direction: 'exit', simulated: true },
    nowMs,
  );
  await demo.record({
    client_app_row_id: client.id,
    client_secret: client.client_secret,
    user_id: driver.id,
    driver_password: password,
    parking_id: parking.id,
  });
  const row = await demo.find();
  if (!row) throw failed('the demo data could not be recorded');
  return read(store, row);
}
