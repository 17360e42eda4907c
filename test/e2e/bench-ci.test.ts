// docs/bench.md's CI job that shares a bench (Sharing a bench), taken from
// the document as it is and run as a bash script, its service's address
// (http://bench:8080) alone replaced by a real API's: it reserves the box,
// runs the suite recorded against a simulated box named in its bench.yaml,
// and its trap releases the box. The run is kept with the job's labels, and
// nothing holds the box afterwards.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { brokerForTest } from '../helpers/broker.js';
import { boxFile } from '../helpers/conformance-fixtures.js';
import { simOnBroker } from '../helpers/conformance-mqtt-sim.js';
import { markedScript } from '../helpers/markdown-script.js';
import { operatorService } from '../helpers/operator-service.js';
import { folderWithParkbench, runScript } from '../helpers/shell-script.js';

const BENCH_MD = fileURLToPath(new URL('../../docs/bench.md', import.meta.url));

test("the bench's CI job passes as written: the box reserved, the run recorded with its labels, the box released", async (t) => {
  const service = await operatorService(t, { moduleId: 4242 });
  const broker = await brokerForTest(t);
  const box = await boxFile(t, 4242);
  await simOnBroker(t, box, broker.url);
  const folder = await folderWithParkbench();
  t.teardown(() => folder.remove());
  await writeFile(join(folder.path, 'box-4242.json'), JSON.stringify(box.document));
  await writeFile(
    join(folder.path, 'bench.yaml'),
    `boxes:\n  - module_id: 4242\n    provisioning: box-4242.json\n    link: { mqtt: "${broker.url}" }\n    labels: { hardware: rev-C }\n`,
  );
  const script = markedScript(await readFile(BENCH_MD, 'utf8'), 'bench-ci');
  t.true(script.includes('http://bench:8080'), 'the script names its service');
  const job = [
    // What the CI runner gives the job.
    'export CI=true CI_JOB_ID=123 CI_JOB_URL=https://ci.example/jobs/123',
    `export BENCH_OPERATOR_TOKEN=${service.token} FIRMWARE_VERSION=1.4.2`,
    'unset PARKBENCH_URL PARKBENCH_OPERATOR_TOKEN PARKBENCH_RESERVATION',
    script.replaceAll('http://bench:8080', service.url),
  ].join('\n');
  const result = await runScript(t, folder.path, job);
  t.is(result.code, 0, result.stdout + result.stderr);

  const runs = await service.call('GET', '/api/operator/runs?module_id=4242');
  const [run] = runs.json<{ runs: { id: string; state: string; source: string; labels: Record<string, string> }[] }>()
    .runs;
  t.like(run, {
    state: 'passed',
    source: 'ci',
    labels: { hardware: 'rev-C', firmware: '1.4.2', ci_job_url: 'https://ci.example/jobs/123' },
  });
  t.regex(await readFile(join(folder.path, 'conformance.xml'), 'utf8'), /<testsuites /);
  const reservation = await service.call('GET', '/api/operator/boxes/4242/reservation');
  t.deepEqual(reservation.json(), { reservation: null }, 'the trap released the box');
});
