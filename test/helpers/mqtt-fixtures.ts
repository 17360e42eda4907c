// A database with one parking, boxes and MQTT clients, for broker tests.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import { randomKeyHex } from '../../api/auth/secrets.js';
import { openDatabase, type Db } from '../../api/db/open.js';
import { MqttAccountRepository } from '../../api/mqtt/accounts.js';
import { hashMqttPassword } from '../../api/auth/mqtt-password.js';
import { BoxRepository } from '../../api/boxes/repository.js';
import type { BoxDirection } from '../../firmware-protocol/index.js';
import { ParkingRepository } from '../../api/parkings/repository.js';
import { sqliteStore } from '../../api/db/store.js';

export interface BrokerFixture {
  db: Db;
  directory: string;
  databasePath: string;
  parkingId: number;
  /** module id -> MQTT password */
  boxes: Map<number, string>;
  gateway: { username: string; password: string };
  operator: { username: string; password: string };
}

export async function brokerFixture(
  t: ExecutionContext,
  moduleIds: readonly number[] = [9101, 9102],
): Promise<BrokerFixture> {
  const directory = mkdtempSync(join(tmpdir(), 'pb-mqtt-'));
  const databasePath = join(directory, 'db.sqlite');
  const db = openDatabase(databasePath);
  t.teardown(() => {
    db.close();
    rmSync(directory, { recursive: true, force: true });
  });
  const store = sqliteStore(db);
  const parkingId = await new ParkingRepository(store).insert(
    {
      name: 'Lot',
      description: null,
      currency: 'EUR',
      pricePerHourMinor: 250,
      maxDurationMinutes: 120,
      tries: 10,
      isOnline: false,
      keys: { accessMode: 'sealed', parkingKey: randomKeyHex() },
    },
    Date.now(),
  );
  const boxes = new Map<number, string>();
  const repository = new BoxRepository(store);
  for (const [index, moduleId] of moduleIds.entries()) {
    const password = `box-password-${moduleId}`;
    const direction: BoxDirection = index % 2 === 0 ? 'entrance' : 'exit';
    await repository.insert(
      {
        moduleId,
        parkingId,
        direction,
        macAddress: `00:07:80:AA:00:${String(index).padStart(2, '0')}`,
        boxKey: randomKeyHex(),
        mqttPasswordHash: hashMqttPassword(password),
      },
      Date.now(),
    );
    boxes.set(moduleId, password);
  }
  const accounts = new MqttAccountRepository(store);
  const gateway = { username: 'gw-bench', password: 'gateway-password' };
  const operator = { username: 'op-tester', password: 'operator-password' };
  await accounts.addClient(
    { name: 'bench', role: 'gateway', username: gateway.username, password_hash: hashMqttPassword(gateway.password) },
    Date.now(),
  );
  await accounts.addClient(
    {
      name: 'tester',
      role: 'operator',
      username: operator.username,
      password_hash: hashMqttPassword(operator.password),
    },
    Date.now(),
  );
  return { db, directory, databasePath, parkingId, boxes, gateway, operator };
}
