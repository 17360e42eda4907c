// Smart keys: minting a session's or an operator's key, their records, the
// spec's JSON, the driver's routes and the open route that sends a key's
// command to a box.
//
// The feature's public face: another folder of api/ imports it only from
// here (eslint.config.js, `featureImportConfigs`).
export { type KeyRequest, type MintDeps, mintSmartKey, sealedKeyRow } from './mint.js';
export { openSmartKeyRoutes } from './open-route.js';
export { mintOperatorAccess } from './operator-access.js';
export { KEY_ROW_COLUMNS, type KeyPurpose, SmartKeyRepository, type SmartKeyRow } from './repository.js';
export { smartKeyRoutes } from './routes.js';
export { smartKeyBodies, smartKeyBody, type SmartKeyBody, type SmartKeyViewDeps } from './view.js';
