// Kept runs (conformance and soak, from the page, the operator API and the
// command line): their repository, their routes, their comparison.
//
// The feature's public face: another folder of api/ imports it only from
// here (eslint.config.js, `featureImportConfigs`).
export { compareRuns, type Comparison } from './compare.js';
export { runReadRoutes, type RunReadRouteDeps } from './read-routes.js';
export { runRecordRoutes, type RunRecordRouteDeps } from './record-routes.js';
export { INTERRUPTED_ERROR, QUIET_ERROR, Runs, type RunEnd, type RunStart, type RunsDeps } from './runs.js';
export { labelsBodySchema } from './schemas.js';
export type { RunResultView, RunSource, RunState, RunView, RunWithResults } from './view.js';
