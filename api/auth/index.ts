// Who calls: drivers and client applications (their records, registration,
// the once-shown client secret), OAuth 2.0 tokens and their families, the
// bearer check, the failed-login limiter, and the hashing of every secret
// (scrypt, and the PBKDF2 of MQTT passwords mosquitto reads).
//
// The feature's public face: another folder of api/ imports it only from
// here (eslint.config.js, `featureImportConfigs`).
export { BearerCache } from './bearer-cache.js';
export { bearerAuth, type BearerDeps } from './bearer.js';
export { ClientAppRepository } from './client-apps-repository.js';
export { createClientApp } from './create-client-app.js';
export { createDriver } from './create-driver.js';
export { LoginLimiter } from './login-limiter.js';
export { meRoutes } from './me-route.js';
export { hashMqttPassword, isMosquittoHash, verifyMqttPassword } from './mqtt-password.js';
export { oauthRoutes } from './oauth-routes.js';
export { registerDriverRoutes } from './register-route.js';
export { newToken, randomKeyHex, randomSecret, tokenHash } from './secrets.js';
export { TokenRepository } from './tokens-repository.js';
export { UserRepository } from './users-repository.js';
