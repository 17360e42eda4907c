// `parkbench/testing`: a parking with boxes in one call, for any test suite.
//
//   import { startBench } from 'parkbench/testing';
//   const bench = await startBench();  // the API, its MQTT broker, the demo parking, its simulated boxes
//   …                                   // bench.api_url, bench.driver, bench.boxes, bench.sim(…), bench.waitForSession(…)
//   await bench.stop();                 // everything stopped, its temporary folder removed
//
// The package's public entry point for tests (package.json `exports`,
// `./testing`); what it exports is what users may rely on.
export type { Bench } from './bench.js';
export { BenchOptionError, type BenchOptions } from './options.js';
export { startBench } from './start-bench.js';
export type { OperatorSession } from '../api/operators/views.js';
export type { SessionState } from '../api/sessions/index.js';
export type { StateMessage } from '../lib/mqtt-messages.js';
export type { SimSetMessage } from '../lib/sim-set.js';
