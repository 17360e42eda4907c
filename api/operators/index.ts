// The operator API under /api/operator: accounts and their hook, the read
// models of its routes, one-off box commands, the live event stream
// (stream/), and the route groups of control, conformance and box
// simulation mounted under it.
//
// The feature's public face: another folder of api/ imports it only from
// here (eslint.config.js, `featureImportConfigs`).
export { OperatorRepository } from './repository.js';
export { OPERATOR_PREFIX, operatorRoutes } from './routes.js';
export { StreamRenderer } from './stream/render.js';
export { EventStream } from './stream/stream.js';
export { EventTicketRepository } from './stream/tickets.js';
