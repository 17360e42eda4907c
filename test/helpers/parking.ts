// A secured parking with boxes in a test app's database, sealed or signed
// (docs/protocol.md, Keys), and the calls of the session routes.
import type { LightMyRequestResponse } from 'fastify';
import { randomKeyHex } from '../../api/auth/secrets.js';
import { freshParkingKeys } from '../../api/parkings/create.js';
import type { AccessMode } from '../../api/parkings/repository.js';
import {
  FrameKind,
  openCommand,
  openSignedCommand,
  type OpenResult,
  type BoxDirection,
} from '../../firmware-protocol/index.js';
import type { Provisioning } from '../../lib/provisioning-file.js';
import type { TestApp } from './api-app.js';
import { testProvisioning } from './box-provisioning.js';
import { signedProvisioning, type IssuerKeyPair } from './signed-box.js';

export { ACCESS_MODES } from '../../api/parkings/access-modes.js';

export interface SeededBox {
  moduleId: number;
  direction: BoxDirection;
  macAddress: string;
  boxKey: Buffer;
}

export interface SeededParking {
  id: number;
  accessMode: AccessMode;
  /** K_park of a sealed parking; null for a signed one. */
  parkingKey: Buffer | null;
  /** The issuer key pair of a signed parking (as the database holds it); null for a sealed one. */
  issuer: IssuerKeyPair | null;
  /** The kind of its smart keys' access commands. */
  accessKind: typeof FrameKind.ACCESS | typeof FrameKind.ACCESS_SIGNED;
  boxes: SeededBox[];
  entrance: SeededBox;
  exit: SeededBox;
}

export interface ParkingOptions {
  name?: string;
  currency?: string;
  pricePerHourMinor?: number;
  maxDurationMinutes?: number;
  tries?: number;
  isOnline?: boolean;
  /** Directions of the boxes, in module id order; default entrance + exit. */
  boxes?: BoxDirection[];
  firstModuleId?: number;
  /** Default sealed, the mode of the tests written before protocol version 2;
   * tests of behaviour that must hold for both run once per ACCESS_MODES. */
  accessMode?: AccessMode;
}

let nextModuleId = 9100;

export async function seedParking(test: TestApp, options: ParkingOptions = {}): Promise<SeededParking> {
  const keys = freshParkingKeys(options.accessMode ?? 'sealed');
  const id = await test.ctx.parkings.insert(
    {
      name: options.name ?? 'Station lot',
      description: null,
      currency: options.currency ?? 'EUR',
      pricePerHourMinor: options.pricePerHourMinor ?? 250,
      maxDurationMinutes: options.maxDurationMinutes ?? 120,
      tries: options.tries ?? 10,
      isOnline: options.isOnline ?? false,
      keys,
    },
    test.clock.now(),
  );
  const boxes: SeededBox[] = [];
  let moduleId = options.firstModuleId ?? (nextModuleId += 100);
  for (const direction of options.boxes ?? ['entrance', 'exit']) {
    const boxKeyHex = randomKeyHex();
    const macAddress = `02:50:42:00:${((moduleId >> 8) & 0xff).toString(16).padStart(2, '0').toUpperCase()}:${(moduleId & 0xff).toString(16).padStart(2, '0').toUpperCase()}`;
    await test.ctx.boxes.insert(
      { moduleId, parkingId: id, direction, macAddress, boxKey: boxKeyHex, mqttPasswordHash: 'x' },
      test.clock.now(),
    );
    boxes.push({ moduleId, direction, macAddress, boxKey: Buffer.from(boxKeyHex, 'hex') });
    moduleId += 1;
  }
  // A parking without boxes gets a placeholder that no database row matches.
  const none: SeededBox = { moduleId: -1, direction: 'entrance', macAddress: '', boxKey: Buffer.alloc(16) };
  const entrance = boxes.find((box) => box.direction === 'entrance') ?? boxes[0] ?? none;
  const exit = boxes.find((box) => box.direction === 'exit') ?? boxes[0] ?? none;
  return {
    id,
    accessMode: keys.accessMode,
    parkingKey: keys.accessMode === 'sealed' ? Buffer.from(keys.parkingKey, 'hex') : null,
    issuer:
      keys.accessMode === 'signed'
        ? { privateKey: Buffer.from(keys.issuerPrivateKey, 'hex'), publicKey: Buffer.from(keys.issuerPublicKey, 'hex') }
        : null,
    accessKind: keys.accessMode === 'signed' ? FrameKind.ACCESS_SIGNED : FrameKind.ACCESS,
    boxes,
    entrance,
    exit,
  };
}

/** Opens a smart key's access command as a box of the parking would: under
 * K_park (sealed) or the issuer public key (signed). */
export function openAccessCommand(parking: SeededParking, command: Buffer): OpenResult {
  if (parking.issuer !== null) return openSignedCommand(command, parking.issuer.publicKey);
  if (parking.parkingKey === null) throw new Error('a sealed parking without K_park');
  return openCommand(command, parking.parkingKey);
}

/** What `admin box provision` gives a box of the parking (no MQTT account):
 * K_park for a sealed parking, the issuer public key for a signed one. */
export function provisioningOf(parking: SeededParking, box: SeededBox): Provisioning {
  const fields = {
    moduleId: box.moduleId,
    parkingId: parking.id,
    direction: box.direction,
    macAddress: box.macAddress,
    boxKey: box.boxKey,
    skewSeconds: 120,
    minBatteryMv: 3_300,
    mqtt: null,
  };
  if (parking.issuer !== null) return signedProvisioning(parking.issuer, fields);
  if (parking.parkingKey === null) throw new Error('a sealed parking without K_park');
  return testProvisioning({ ...fields, parkingKey: parking.parkingKey });
}

export function createSession(
  test: TestApp,
  accessToken: string | undefined,
  payload: unknown,
): Promise<LightMyRequestResponse> {
  return test.app.inject({
    method: 'POST',
    url: '/api/car_driver/parking_sessions',
    headers: accessToken === undefined ? {} : { authorization: `Bearer ${accessToken}` },
    ...(payload === undefined ? {} : { payload: payload as string }),
  });
}

export function authGet(test: TestApp, accessToken: string, url: string): Promise<LightMyRequestResponse> {
  return test.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${accessToken}` } });
}

export function finalize(test: TestApp, accessToken: string, id: number | string): Promise<LightMyRequestResponse> {
  return test.app.inject({
    method: 'PUT',
    url: `/api/car_driver/parking_sessions/${id}/finalize`,
    headers: { authorization: `Bearer ${accessToken}` },
  });
}

let driverCount = 0;

/** Registers another driver and logs in; returns the access token. */
export async function anotherDriver(test: TestApp): Promise<{ accessToken: string; email: string }> {
  driverCount += 1;
  const email = `driver${driverCount}-${Math.random().toString(36).slice(2, 8)}@example.com`;
  const fields = {
    email,
    password: 'correct horse',
    password_confirmation: 'correct horse',
    first_name: 'D',
    last_name: 'R',
    phone: '1',
  };
  const registered = await test.app.inject({
    method: 'POST',
    url: '/api/car_driver',
    payload: { api_car_driver_fo_user: fields, ...test.client },
  });
  if (registered.statusCode !== 201) throw new Error(registered.body);
  const token = await test.app.inject({
    method: 'POST',
    url: '/api/oauth/token',
    payload: { grant_type: 'password', username: email, password: 'correct horse', ...test.client },
  });
  return { accessToken: token.json<{ access_token: string }>().access_token, email };
}
