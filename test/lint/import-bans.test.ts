// The import bans of the folder READMEs, as eslint.config.js enforces them:
// each snippet is linted as if it were a file of the folder, through the
// repository's own config (helpers/lint-snippet.ts).
import test from 'ava';
import { snippetLinter } from '../helpers/lint-snippet.js';

const importMessages = snippetLinter('no-restricted-imports');

const banned = test.macro({
  async exec(t, filePath: string, code: string, readme: string) {
    const messages = await importMessages(filePath, code);
    t.is(messages.length, 1, messages.join('\n'));
    t.regex(messages[0] ?? '', /^no-restricted-imports: .*see .*README\.md/);
    t.true(messages[0]?.includes(readme), messages[0]);
  },
  title: (_, filePath: string, code: string) => `${filePath} may not: ${code}`,
});

const allowed = test.macro({
  async exec(t, filePath: string, code: string) {
    t.deepEqual(await importMessages(filePath, code), []);
  },
  title: (_, filePath: string, code: string) => `${filePath} may: ${code}`,
});

// firmware-protocol/ imports nothing of ours and no package but node:crypto.
test(banned, 'firmware-protocol/x.ts', "import { systemClock } from '../lib/clock.js';", 'firmware-protocol/README.md');
test(banned, 'firmware-protocol/x.ts', "import { readFile } from 'node:fs/promises';", 'firmware-protocol/README.md');
test(banned, 'firmware-protocol/x.ts', "import mqtt from 'mqtt';", 'firmware-protocol/README.md');
test(
  allowed,
  'firmware-protocol/x.ts',
  "import { createCipheriv } from 'node:crypto';\nimport { seal } from './ccm.js';",
);

// lib/ imports firmware-protocol/ only, and Node, mqtt, serialport,
// @abandonware/noble (the BLE link the gateway and the conformance suite share).
for (const part of ['api', 'simulator', 'gateway', 'conformance', 'cli', 'test', 'perf']) {
  test(banned, 'lib/x.ts', `import { x } from '../${part}/x.js';`, 'lib/README.md');
}
test(banned, 'lib/x.ts', "import fastify from 'fastify';", 'lib/README.md');
test(
  allowed,
  'lib/x.ts',
  "import { decode } from '../firmware-protocol/index.js';\nimport mqtt from 'mqtt';\nimport { SerialPort } from 'serialport';\nimport { EventEmitter } from 'node:events';",
);
test(
  allowed,
  'lib/noble.ts',
  "import type * as NobleModule from '@abandonware/noble';\nexport type { Peripheral } from '@abandonware/noble';",
);

// simulator/ and gateway/ never import each other or api/; at any depth, in
// any form of import.
test(banned, 'simulator/x.ts', "import { Gateway } from '../gateway/gateway.js';", 'simulator/README.md');
test(banned, 'simulator/links/x.ts', "import type { Gateway } from '../../gateway/gateway.js';", 'simulator/README.md');
test(banned, 'simulator/x.ts', "export { buildApp } from '../api/app.js';", 'simulator/README.md');
test(banned, 'simulator/links/x.ts', "export * from '../../api/app.js';", 'simulator/README.md');
test(banned, 'simulator/x.ts', "import express from 'fastify';", 'simulator/README.md');
test(
  allowed,
  'simulator/links/x.ts',
  "import { WebSocket } from 'ws';\nimport { systemClock } from '../../lib/clock.js';\nimport { SimulatedBox } from '../simulated-box.js';",
);
test(banned, 'gateway/x.ts', "import { SimulatedBox } from '../simulator/simulated-box.js';", 'gateway/README.md');
test(banned, 'gateway/serial/x.ts', "import { buildApp } from '../../api/app.js';", 'gateway/README.md');
test(
  allowed,
  'gateway/x.ts',
  "import { BleCentral } from '../lib/ble-central.js';\nimport type { Noble } from '../lib/noble.js';\nimport { SerialBoxLink } from '../lib/serial-box-link.js';\nimport { chunk } from '../firmware-protocol/index.js';",
);
// noble comes through lib/noble.ts, loaded lazily: never at a gateway file's import.
test(banned, 'gateway/x.ts', "import noble from '@abandonware/noble';", 'gateway/README.md');

// api/ imports firmware-protocol/ and lib/ only: no other part, not cli/.
for (const part of ['simulator', 'gateway', 'conformance', 'cli', 'test', 'perf']) {
  test(banned, 'api/sessions/x.ts', `import { x } from '../../${part}/x.js';`, 'api/README.md');
}
test(allowed, 'api/x.ts', "import fastify from 'fastify';\nimport { systemClock } from '../lib/clock.js';");
// api/ by feature: a feature imports another only through its index.ts, at
// any depth; the shared layers (config, db, events, http) import no
// feature; no folder imports the composition root.
test(banned, 'api/sessions/x.ts', "import { SmartKeyRepository } from '../smart-keys/repository.js';", 'api/README.md');
test(banned, 'api/operators/stream/x.ts', "import type { BoxRow } from '../../boxes/repository.js';", 'api/README.md');
test(banned, 'api/sessions/x.ts', "export { smartKeyBody } from '../smart-keys/view.js';", 'api/README.md');
test(banned, 'api/http/x.ts', "import { paymentErrorPages } from '../payments/index.js';", 'api/README.md');
test(banned, 'api/db/migrations/x.ts', "import type { SessionRow } from '../../sessions/index.js';", 'api/README.md');
test(banned, 'api/sessions/x.ts', "import { createService } from '../service.js';", 'api/README.md');
test(banned, 'api/operators/stream/x.ts', "import type { AppContext } from '../../context.js';", 'api/README.md');
test(banned, 'api/service.ts', "import { SessionService } from './sessions/service.js';", 'api/README.md');
test(
  allowed,
  'api/sessions/x.ts',
  "import { SmartKeyRepository, smartKeyBody } from '../smart-keys/index.js';\nimport type { Store } from '../db/store.js';\nimport { ApiError } from '../http/errors.js';\nimport { SessionService } from './service.js';",
);
test(
  allowed,
  'api/operators/stream/x.ts',
  "import type { BoxRow } from '../../boxes/index.js';\nimport { EventHub } from '../../events/hub.js';\nimport { BoxEntries } from '../box-entries.js';",
);
test(
  allowed,
  'api/http/x.ts',
  "import type { ApiConfig } from '../config/index.js';\nimport type { Store } from '../db/store.js';",
);
test(
  allowed,
  'api/service.ts',
  "import { SessionService } from './sessions/index.js';\nimport { buildApp } from './app.js';",
);
// ...but api/conformance-runs/, the conformance suite run from the operator
// API (api/conformance-runs/README.md), imports conformance/; no other folder of api/.
test(
  allowed,
  'api/conformance-runs/x.ts',
  "import { runSuite } from '../../conformance/run-suite.js';\nimport { renderJunit } from '../../conformance/reports/junit.js';\nimport type { Db } from '../db/open.js';",
);
test(banned, 'api/operators/x.ts', "import { runSuite } from '../../conformance/run-suite.js';", 'api/README.md');
test(allowed, 'api/operators/x.ts', "import { ConformanceRuns } from '../conformance-runs/index.js';");
for (const part of ['simulator', 'gateway', 'cli', 'test', 'perf']) {
  test(
    banned,
    'api/conformance-runs/x.ts',
    `import { x } from '../../${part}/x.js';`,
    'api/conformance-runs/README.md',
  );
}

// conformance/ imports firmware-protocol/ and lib/, no file excepted: its
// serial and BLE targets drive the box links of lib/, as the gateway does.
test(banned, 'conformance/x.ts', "import { Gateway } from '../gateway/gateway.js';", 'conformance/README.md');
test(
  banned,
  'conformance/targets/x.ts',
  "import { SerialBoxLink } from '../../gateway/serial/serial-box-link.js';",
  'conformance/README.md',
);
test(banned, 'conformance/x.ts', "import { buildApp } from '../api/app.js';", 'conformance/README.md');
test(
  banned,
  'conformance/targets/serial-box-target.ts',
  "import { SerialBoxLink } from '../../gateway/serial/serial-box-link.js';",
  'conformance/README.md',
);
test(
  banned,
  'conformance/targets/ble-box-target.ts',
  "import { BleCentral } from '../../gateway/ble/ble-central.js';",
  'conformance/README.md',
);
test(
  banned,
  'conformance/targets/ble-box-target.ts',
  "import type { Noble } from '../../gateway/ble/noble.js';",
  'conformance/README.md',
);
test(
  allowed,
  'conformance/targets/x.ts',
  "import { SerialBoxLink } from '../../lib/serial-box-link.js';\nimport { BleCentral } from '../../lib/ble-central.js';\nimport type { Noble } from '../../lib/noble.js';",
);
test(
  banned,
  'conformance/targets/serial-box-target.ts',
  "import { Gateway } from '../../gateway/gateway.js';",
  'conformance/README.md',
);
test(
  banned,
  'conformance/box-under-test.ts',
  "import { SimulatedBox } from '../simulator/simulated-box.js';",
  'conformance/README.md',
);

// perf/ does not import test/ or cli/, no file excepted: what it shares with
// the tests lives in lib/ (free ports) and testkit/ (the pty pair, the test servers) and simulator/ (responses
// made ahead by a simulated box); nothing imports perf/.
test(banned, 'perf/x.ts', "import { freePort } from '../test/helpers/free-port.js';", 'perf/README.md');
test(banned, 'perf/support/x.ts', "import { startPtyPair } from '../../test/helpers/pty-pair.js';", 'perf/README.md');
test(banned, 'perf/x.ts', "import { provisionFleet } from '../cli/admin/fleet.js';", 'perf/README.md');
test(banned, 'perf/ingest.ts', "import { freePort } from '../test/helpers/free-port.js';", 'perf/README.md');
test(banned, 'perf/serial.ts', "import { startPtyPair } from '../test/helpers/pty-pair.js';", 'perf/README.md');
test(
  banned,
  'perf/support/ingest-worker.ts',
  "import { verifiedResponses } from '../../test/helpers/verified-responses.js';",
  'perf/README.md',
);
test(
  allowed,
  'perf/support/x.ts',
  "import { freePort } from '../../lib/free-port.js';\nimport { startPtyPair } from '../../testkit/pty-pair.js';\nimport { makeVerifiedResponses } from '../../simulator/verified-responses.js';",
);
test(banned, 'perf/ingest.ts', "import { startPtyPair } from '../test/helpers/pty-pair.js';", 'perf/README.md');
test(
  allowed,
  'perf/x.ts',
  "import { buildApp } from '../api/app.js';\nimport { Gateway } from '../gateway/gateway.js';\nimport { Simulation } from '../simulator/simulation.js';",
);
test(banned, 'test/api/x.test.ts', "import { x } from '../../perf/api.js';", 'test/README.md');
test(allowed, 'test/bench-page/x.ts', "import type { Box } from '../../web/bench/src/types.js';");
test(banned, 'cli/x.ts', "import { x } from '../perf/api.js';", 'cli/README.md');

// cli/ imports every part but never test/.
test(banned, 'cli/admin/x.ts', "import { testApp } from '../../test/helpers/api-app.js';", 'cli/README.md');
test(
  allowed,
  'cli/admin/x.ts',
  "import { buildApp } from '../../api/app.js';\nimport { runSuite } from '../../conformance/run-suite.js';",
);

// web/ runs in a browser: preact and uplot, nothing of ours, no Node module.
for (const part of ['api', 'lib', 'firmware-protocol', 'cli']) {
  test(banned, 'web/bench/src/x.ts', `import type { X } from '../../../${part}/x.js';`, 'web/README.md');
}
test(banned, 'web/bench/src/views/x.ts', "import { x } from '../../../../lib/clock.js';", 'web/README.md');
test(banned, 'web/bench/src/x.ts', "import { readFile } from 'node:fs/promises';", 'web/README.md');
test(banned, 'web/bench/src/x.ts', "import fastify from 'fastify';", 'web/README.md');
test(
  allowed,
  'web/bench/src/x.ts',
  "import { render } from 'preact';\nimport { useState } from 'preact/hooks';\nimport uPlot from 'uplot';\nimport 'uplot/dist/uPlot.min.css';\nimport { createStore } from './store';\nimport { App } from './views/app';",
);

// scripts/ (developer tools) import the parts, not test/ or cli/.
test(banned, 'scripts/x.ts', "import { runCli } from '../test/helpers/run-cli.js';", 'scripts/README.md');
test(banned, 'scripts/x.ts', "import { startCliBench } from '../cli/start/bench.js';", 'scripts/README.md');
test(
  allowed,
  'scripts/x.ts',
  "import { chromiumArgs } from '../testkit/chromium.js';\nimport { build } from 'esbuild';",
);

// testkit/ (the test servers and the pty pair) serves tests, benchmarks and
// developer scripts only: no product folder imports it.
for (const [file, climb] of [
  ['api/x.ts', '..'],
  ['api/box-logs/x.ts', '../..'],
  ['cli/commands/x.ts', '../..'],
  ['lib/x.ts', '..'],
  ['simulator/x.ts', '..'],
  ['gateway/x.ts', '..'],
  ['conformance/x.ts', '..'],
] as const) {
  const folder = file.split('/')[0] ?? '';
  test(banned, file, `import { startPostgres } from '${climb}/testkit/postgres-server.js';`, `${folder}/README.md`);
}
test(banned, 'testkit/x.ts', "import { buildApp } from '../api/app.js';", 'testkit/README.md');
test(banned, 'testkit/x.ts', "import { testApp } from '../test/helpers/api-app.js';", 'testkit/README.md');
test(
  allowed,
  'testkit/x.ts',
  "import { freePort } from '../lib/free-port.js';\nimport mqtt from 'mqtt';\nimport { spawn } from 'node:child_process';",
);
test(allowed, 'test/api/db/x.test.ts', "import { startPostgres } from '../../../testkit/postgres-server.js';");
test(allowed, 'perf/x.ts', "import { startMosquittoServer } from '../testkit/mosquitto.js';");

// bin/ runs the build: dist/cli/main.js, nothing else of ours (not the
// sources of cli/); no source folder imports the build.
test(allowed, 'bin/x.js', "export { x } from '../dist/cli/main.js';");
test(banned, 'bin/x.js', "export { x } from '../cli/main.js';", 'bin/README.md');
test(banned, 'cli/commands/x.ts', "import { x } from '../../dist/cli/main.js';", 'cli/README.md');
test(banned, 'test/cli/x.test.ts', "import { x } from '../../dist/api/app.js';", 'test/README.md');

// The same bans hold for import() with a constant specifier, which the
// command line uses to load what a command runs when it runs.
const dynamicImportMessages = snippetLinter('parkbench/no-restricted-dynamic-imports');
const bannedDynamic = test.macro({
  async exec(t, filePath: string, code: string, readme: string) {
    const messages = await dynamicImportMessages(filePath, code);
    t.is(messages.length, 1, messages.join('\n'));
    t.regex(messages[0] ?? '', /^parkbench\/no-restricted-dynamic-imports: .*see .*README\.md/);
    t.true(messages[0]?.includes(readme), messages[0]);
  },
  title: (_, filePath: string, code: string) => `${filePath} may not: ${code}`,
});
const allowedDynamic = test.macro({
  async exec(t, filePath: string, code: string) {
    t.deepEqual(await dynamicImportMessages(filePath, code), []);
  },
  title: (_, filePath: string, code: string) => `${filePath} may: ${code}`,
});
test(
  bannedDynamic,
  'cli/commands/x.ts',
  "const { testApp } = await import('../../test/helpers/api-app.js');",
  'cli/README.md',
);
test(bannedDynamic, 'cli/commands/x.ts', 'const { x } = await import(`../../perf/api.js`);', 'cli/README.md');
test(
  bannedDynamic,
  'simulator/x.ts',
  "const { Gateway } = await import('../gateway/gateway.js');",
  'simulator/README.md',
);
test(bannedDynamic, 'lib/x.ts', "const fastify = await import('fastify');", 'lib/README.md');
test(
  bannedDynamic,
  'api/sessions/x.ts',
  "const { SmartKeyRepository } = await import('../smart-keys/repository.js');",
  'api/README.md',
);
test(
  allowedDynamic,
  'cli/commands/x.ts',
  "const { serveApi } = await import('../run/api.js');\nconst { addBox } = await import('../../api/boxes/add.js');",
);
test(allowedDynamic, 'lib/noble.ts', "const noble = await import('@abandonware/noble');");
test(allowedDynamic, 'bin/parkbench.js', "await import('../dist/cli/main.js');");
test(bannedDynamic, 'bin/parkbench.js', "await import('../cli/main.js');", 'bin/README.md');

// whole-bench/ (what `parkbench start` runs and testing/ starts) imports the
// API, the simulator and what they share; no part imports it.
test(
  allowed,
  'whole-bench/x.ts',
  "import { createService } from '../api/service.js';\nimport { Simulation } from '../simulator/simulation.js';\nimport { Topics } from '../lib/mqtt-topics.js';\nimport mqtt from 'mqtt';\nimport { rm } from 'node:fs/promises';",
);
for (const folder of ['cli', 'gateway', 'conformance', 'testing', 'test']) {
  test(banned, 'whole-bench/x.ts', `import { x } from '../${folder}/x.js';`, 'whole-bench/README.md');
}
test(banned, 'whole-bench/x.ts', "import fastify from 'fastify';", 'whole-bench/README.md');
for (const [file, climb] of [
  ['api/x.ts', '..'],
  ['simulator/links/x.ts', '../..'],
  ['lib/x.ts', '..'],
] as const) {
  const folder = file.split('/')[0] ?? '';
  test(banned, file, `import { startWholeBench } from '${climb}/whole-bench/index.js';`, `${folder}/README.md`);
}
test(allowed, 'cli/start/x.ts', "import { startWholeBench } from '../../whole-bench/index.js';");

// testing/ (`parkbench/testing`) starts the whole bench and reads the API;
// no product code imports it: only the tests and the benchmarks.
test(
  allowed,
  'testing/x.ts',
  "import { startWholeBench } from '../whole-bench/index.js';\nimport { loadConfig } from '../api/config/index.js';\nimport { freePortOn } from '../lib/free-port.js';\nimport { rm } from 'node:fs/promises';",
);
for (const folder of ['cli', 'simulator', 'testkit', 'test']) {
  test(banned, 'testing/x.ts', `import { x } from '../${folder}/x.js';`, 'testing/README.md');
}
test(banned, 'testing/x.ts', "import mqtt from 'mqtt';", 'testing/README.md');
for (const [file, climb] of [
  ['api/x.ts', '..'],
  ['cli/commands/x.ts', '../..'],
  ['whole-bench/x.ts', '..'],
  ['lib/x.ts', '..'],
  ['scripts/x.ts', '..'],
] as const) {
  const folder = file.split('/')[0] ?? '';
  test(banned, file, `import { startBench } from '${climb}/testing/index.js';`, `${folder}/README.md`);
}
test(allowed, 'test/testing/x.test.ts', "import { startBench } from '../../testing/index.js';");
test(allowed, 'perf/x.ts', "import { startBench } from '../testing/index.js';");

// examples/ are test files as a user writes them: parkbench by its package name, nothing by path.
test(
  allowed,
  'examples/x.test.js',
  "import { startBench } from 'parkbench/testing';\nimport mqtt from 'mqtt';\nimport { phone } from './phone.js';",
);
test(banned, 'examples/x.test.js', "import { startBench } from '../testing/index.js';", 'examples/README.md');
