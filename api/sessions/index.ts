// Pay-per-use parking sessions: the state machine apart from HTTP, the
// per-driver creation limit, pricing, the spec's JSON and its routes.
//
// The feature's public face: another folder of api/ imports it only from
// here (eslint.config.js, `featureImportConfigs`).
export { SessionCreateLimiter, sessionCreateLimitsOf } from './create-limit.js';
export type { SessionCreation } from './creation.js';
export { sessionCreationOf } from './creation-of.js';
export { SessionRepository, type SessionRow, type SessionState } from './repository.js';
export { parkingSessionRoutes } from './routes.js';
export { parkingSessionSchema, sessionResponseSchema, smartKeySchema } from './schemas.js';
export { endSession, onPaymentOutcome, type SessionServiceDeps } from './service.js';
