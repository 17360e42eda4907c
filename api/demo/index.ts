// The idempotent demo data of `admin demo` and `start`.
//
// The feature's public face: another folder of api/ imports it only from
// here (eslint.config.js, `featureImportConfigs`).
export { ensureDemo, type DemoData } from './ensure.js';
