// The bench page: its built files served under /bench.
//
// The feature's public face: another folder of api/ imports it only from
// here (eslint.config.js, `featureImportConfigs`).
export { benchPageRoutes } from './routes.js';
