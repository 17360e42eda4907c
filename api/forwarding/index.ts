// Standard Webhooks forwarding of box logs: a parking's settings, the
// outbox, the worker and its retries, signatures, the public-address check.
//
// The feature's public face: another folder of api/ imports it only from
// here (eslint.config.js, `featureImportConfigs`).
export { forwardingStatus, type ForwardingStatus, reviveDeadDeliveries } from './administration.js';
export { OutboxRepository } from './outbox.js';
export { type ForwardingLogger, ForwardingWorker } from './worker.js';
