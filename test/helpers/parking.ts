// A secured parking with boxes in a test app's database, and the calls of
// the session routes.
import type { LightMyRequestResponse } from 'fastify';
import { randomKeyHex } from '../../api/auth/secrets.js';
import type { Direction } from '../../api/repositories/boxes.js';
import type { TestApp } from './api-app.js';

export interface SeededBox {
  moduleId: number;
  direction: Direction;
  macAddress: string;
  boxKey: Buffer;
}

export interface SeededParking {
  id: number;
  parkingKey: Buffer;
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
  boxes?: Direction[];
  firstModuleId?: number;
}

let nextModuleId = 9100;

export function seedParking(test: TestApp, options: ParkingOptions = {}): SeededParking {
  const parkingKeyHex = randomKeyHex();
  const id = test.ctx.parkings.insert(
    {
      name: options.name ?? 'Station lot',
      description: null,
      currency: options.currency ?? 'EUR',
      pricePerHourMinor: options.pricePerHourMinor ?? 250,
      maxDurationMinutes: options.maxDurationMinutes ?? 120,
      tries: options.tries ?? 10,
      isOnline: options.isOnline ?? false,
      keys: { accessMode: 'sealed', parkingKey: parkingKeyHex },
    },
    test.clock.now(),
  );
  const boxes: SeededBox[] = [];
  let moduleId = options.firstModuleId ?? (nextModuleId += 100);
  for (const direction of options.boxes ?? ['entrance', 'exit']) {
    const boxKeyHex = randomKeyHex();
    const macAddress = `02:50:42:00:${(moduleId >> 8 & 0xff).toString(16).padStart(2, '0').toUpperCase()}:${(moduleId & 0xff).toString(16).padStart(2, '0').toUpperCase()}`;
    test.ctx.boxes.insert({ moduleId, parkingId: id, direction, macAddress, boxKey: boxKeyHex, mqttPasswordHash: 'x' }, test.clock.now());
    boxes.push({ moduleId, direction, macAddress, boxKey: Buffer.from(boxKeyHex, 'hex') });
    moduleId += 1;
  }
  // A parking without boxes gets a placeholder that no database row matches.
  const none: SeededBox = { moduleId: -1, direction: 'entrance', macAddress: '', boxKey: Buffer.alloc(16) };
  const entrance = boxes.find((box) => box.direction === 'entrance') ?? boxes[0] ?? none;
  const exit = boxes.find((box) => box.direction === 'exit') ?? boxes[0] ?? none;
  return { id, parkingKey: Buffer.from(parkingKeyHex, 'hex'), boxes, entrance, exit };
}

export function createSession(test: TestApp, accessToken: string | undefined, payload: unknown): Promise<LightMyRequestResponse> {
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
  return test.app.inject({ method: 'PUT', url: `/api/car_driver/parking_sessions/${id}/finalize`, headers: { authorization: `Bearer ${accessToken}` } });
}

let driverCount = 0;

/** Registers another driver and logs in; returns the access token. */
export async function anotherDriver(test: TestApp): Promise<{ accessToken: string; email: string }> {
  driverCount += 1;
  const email = `driver${driverCount}-${Math.random().toString(36).slice(2, 8)}@example.com`;
  const fields = { email, password: 'correct horse', password_confirmation: 'correct horse', first_name: 'D', last_name: 'R', phone: '1' };
  const registered = await test.app.inject({ method: 'POST', url: '/api/car_driver', payload: { api_car_driver_fo_user: fields, ...test.client } });
  if (registered.statusCode !== 201) throw new Error(registered.body);
  const token = await test.app.inject({ method: 'POST', url: '/api/oauth/token', payload: { grant_type: 'password', username: email, password: 'correct horse', ...test.client } });
  return { accessToken: token.json<{ access_token: string }>().access_token, email };
}
