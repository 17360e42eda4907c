// A car driver created by the operator (the spec's alternative to
// self-registration); the fields are checked by the caller with the
// registration's rules (api/schemas.ts).
import { hashSecret } from './secrets.js';
import type { Store } from '../db/store.js';
import { conflict } from '../http/domain-error.js';
import { publicUser, UserRepository, type PublicUser } from './users-repository.js';

export interface NewDriver {
  email: string;
  password: string;
  firstName: string;
  lastName: string;
  phone: string;
}

export async function createDriver(
  store: Store,
  driver: NewDriver,
  scryptLog2N: number,
  nowMs: number,
): Promise<PublicUser> {
  const users = new UserRepository(store);
  const taken = conflict(`a user with email ${driver.email.toLowerCase()} already exists`);
  if (await users.findByEmail(driver.email)) throw taken;
  const passwordHash = await hashSecret(driver.password, scryptLog2N);
  const row = await users.insert(
    { email: driver.email, passwordHash, firstName: driver.firstName, lastName: driver.lastName, phone: driver.phone },
    nowMs,
  );
  if (!row) throw taken;
  return publicUser(row);
}
