// Conformance runs started from the operator API: one run per box at a
// time, held control commands, the CLI's own reports.
//
// The feature's public face: another folder of api/ imports it only from
// here (eslint.config.js, `featureImportConfigs`).
export { operatorConformanceRoutes } from './routes.js';
export { ConformanceRuns } from './runs.js';
export { junitOfRun } from './run-junit.js';
