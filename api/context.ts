// What routes need, built once per app and passed in (no globals): the
// configuration, the clock, repositories over the app's database, and the
// failed-login limiter.
import type { ApiConfig } from './config.js';
import type { Clock } from '../lib/clock.js';
import type { Db } from './db/open.js';
import { BearerCache } from './auth/bearer-cache.js';
import { LoginLimiter } from './auth/login-limiter.js';
import { ClientAppRepository } from './repositories/client-apps.js';
import { TokenRepository } from './repositories/tokens.js';
import { UserRepository } from './repositories/users.js';

export interface AppContext {
  config: ApiConfig;
  clock: Clock;
  db: Db;
  clientApps: ClientAppRepository;
  users: UserRepository;
  tokens: TokenRepository;
  loginLimiter: LoginLimiter;
  bearerCache: BearerCache;
}

export function createContext(config: ApiConfig, clock: Clock, db: Db): AppContext {
  const tokens = new TokenRepository(db);
  const bearerCache = new BearerCache(config.tokenCacheSeconds * 1000, clock);
  tokens.onPairEnded((pairId) => bearerCache.evictPair(pairId));
  return {
    config,
    clock,
    db,
    clientApps: new ClientAppRepository(db),
    users: new UserRepository(db),
    tokens,
    bearerCache,
    loginLimiter: new LoginLimiter(
      {
        maxFailuresPerUsername: config.loginMaxFailuresPerUsername,
        maxFailuresPerAddress: config.loginMaxFailuresPerAddress,
        windowMs: config.loginFailureWindowSeconds * 1000,
      },
      clock,
    ),
  };
}
