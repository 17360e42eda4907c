// The whole bench in one process (the API with its broker and database, the
// demo data, the demo parking's simulated boxes): what `parkbench start` runs
// and `parkbench/testing` starts. This folder's public face.
export { BenchStartError, type BenchSetting } from './errors.js';
export { startWholeBench, type ReadyInfo, type WholeBench, type WholeBenchOptions } from './start.js';
