// Box logs: the one ingestion path of HTTP and MQTT (resolve, verify,
// dedupe, store, the effects on sessions, keys and control commands,
// queue for forwarding) and the routes of POST/GET /api/box_logs.
//
// The feature's public face: another folder of api/ imports it only from
// here (eslint.config.js, `featureImportConfigs`).
export { BoxLogRefusal } from './errors.js';
export { ingestStoreOf } from './ingest-store-of.js';
export { BoxLogLookups, type IngestStore } from './ingest-store.js';
export { type BoxLogIngestDeps, ingestBoxLogs } from './ingest.js';
export type { ForwardRow } from './repository.js';
export { boxLogRoutes } from './routes.js';
export { type EndAtExit, sessionEnd } from './session-end.js';
export type { BoxLogInput, BoxLogResult } from './types.js';
