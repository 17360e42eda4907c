// A client application for the registration and token endpoints. The secret
// (256 random bits) is returned once, stored as a SHA-256 hash.
import { hashIssuedSecret, randomSecret } from './secrets.js';
import type { Store } from '../db/store.js';
import { ClientAppRepository } from './client-apps-repository.js';

export interface CreatedClientApp {
  id: number;
  name: string;
  client_app_id: string;
  client_secret: string;
}

export async function createClientApp(store: Store, name: string, nowMs: number): Promise<CreatedClientApp> {
  const clientAppId = randomSecret(16);
  const clientSecret = randomSecret(32);
  const hash = hashIssuedSecret(clientSecret);
  const id = await new ClientAppRepository(store).insert(name, clientAppId, hash, nowMs);
  return { id, name, client_app_id: clientAppId, client_secret: clientSecret };
}
