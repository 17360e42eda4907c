// The admin CLI of control commands as real child processes beside the real
// API (in this process, on a fake clock) and real simulated boxes on MQTT:
// rows a CLI process writes are picked up by the API's poll without a
// restart; two operators at once get distinct sequences; --wait, the
// per-box report, the exit codes (0 done, 3 pending, 4 failed) and the
// one-line refusals; `admin box status` lists what is pending; `admin
// control list` says what a pending command of a reserved box waits for.
import test, { type ExecutionContext } from 'ava';
import { addOperator } from '../../api/operators/accounts.js';
import { FakeClock } from '../../lib/fake-clock.js';
import { runCli, type CliResult } from '../helpers/run-cli.js';
import type { TestApp } from '../helpers/api-app.js';
import { anotherDriver, createSession } from '../helpers/parking.js';
import { revoke } from '../helpers/signed-box.js';
import { addParking, controlApp, provisioningOf, startBox } from '../helpers/control-bench.js';
import { column, one, value } from '../helpers/sql.js';
import { databaseArgument } from '../helpers/api-app.js';

/** Runs CLI commands at once while the API's fake clock moves on (its poll). */
async function whileApiRuns(app: TestApp, runs: Promise<CliResult>[]): Promise<CliResult[]> {
  let finished = false;
  const all = Promise.all(runs).finally(() => {
    finished = true;
  });
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- set in the finally callback above, which TypeScript's narrowing does not see
  while (!finished) {
    app.clock.advance(250);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return all;
}

function admin(app: TestApp, ...args: string[]): Promise<CliResult> {
  return runCli(['admin', ...args, '--database', databaseArgument(app)]);
}

async function keyOf(app: TestApp, parkingId: number): Promise<number> {
  const { accessToken } = await anotherDriver(app);
  const created = await createSession(app, accessToken, { parking_session: { secured_parking_id: parkingId } });
  return created.json<{ smart_key: { id: number } }>().smart_key.id;
}

/** The CLI stamps its writes with the wall clock: the API's clock starts there too. */
function benchNow(t: ExecutionContext): Promise<TestApp> {
  return controlApp(t, { clock: new FakeClock(Date.now()) });
}

test('two operators revoke at once from two CLI processes: the API delivers both, with distinct sequences, exit 0', async (t) => {
  const app = await benchNow(t);
  const parking = await addParking(app, { boxes: ['entrance'] });
  const [moduleId = 0] = parking.moduleIds;
  await startBox(t, app, moduleId);
  const [one, two] = [await keyOf(app, parking.id), await keyOf(app, parking.id)];
  const [first, second] = await whileApiRuns(app, [
    admin(app, 'smart-key', 'revoke', '--id', String(one), '--json', '--wait', '30'),
    admin(app, 'smart-key', 'revoke', '--id', String(two), '--json', '--wait', '30'),
  ]);
  for (const [result, id] of [
    [first, one],
    [second, two],
  ] as const) {
    t.is(result?.code, 0, result?.stderr);
    const body = JSON.parse(result?.stdout ?? '{}') as Record<string, unknown>;
    t.like(body, {
      smart_key_id: id,
      newly_revoked: true,
      done: 1,
      pending: 0,
      failed: 0,
      deliveries: [
        { module_id: moduleId, kind: 'REVOKE', state: 'done', attempts: 1, last_status: 'OK', last_error: null },
      ],
    });
  }
  const sequences = await column(app.ctx.store, 'SELECT control_seq FROM control_commands ORDER BY control_seq');
  t.deepEqual(sequences, [1, 2]);
});

test('--wait 0 with the box offline: pending, exit 3; box status lists it; text output one line per box', async (t) => {
  const app = await benchNow(t);
  const parking = await addParking(app, { boxes: ['entrance'] });
  const [moduleId = 0] = parking.moduleIds;
  const key = await keyOf(app, parking.id);
  const revoked = await admin(app, 'smart-key', 'revoke', '--id', String(key), '--wait', '0');
  t.is(revoked.code, 3, revoked.stderr);
  t.is(revoked.stdout, `smart key ${key} revoked\nbox ${moduleId}: REVOKE pending (0 sends so far)\n`);
  const status = await admin(app, 'box', 'status', '--module-id', String(moduleId), '--json');
  t.is(status.code, 0, status.stderr);
  const [box] = JSON.parse(status.stdout) as { pending_control_commands: unknown[] }[];
  t.like(box?.pending_control_commands, [
    { kind: 'REVOKE', purpose: 'revoke', attempts: 0, last_status: null, last_error: null },
  ]);
  const text = await admin(app, 'box', 'status', '--module-id', String(moduleId));
  t.regex(text.stdout, /\n {2}pending REVOKE \(revoke\) since \S+, 0 sends\n$/);
  const again = await admin(app, 'smart-key', 'revoke', '--id', String(key), '--json', '--wait', '0');
  t.is(again.code, 3);
  t.like(JSON.parse(again.stdout) as object, { newly_revoked: false, pending: 1 });
});

test('set-access through the CLI: the API moves the boxes, then the parking is signed (exit 0); refusals are one line', async (t) => {
  const app = await benchNow(t);
  const parking = await addParking(app);
  for (const moduleId of parking.moduleIds) await startBox(t, app, moduleId);
  const [moved] = await whileApiRuns(app, [
    admin(app, 'parking', 'set-access', '--id', String(parking.id), '--access', 'signed', '--json', '--wait', '30'),
  ]);
  t.is(moved?.code, 0, moved?.stderr);
  t.like(JSON.parse(moved?.stdout ?? '{}') as object, {
    parking_id: parking.id,
    access_mode: 'signed',
    switching: false,
    done: 2,
    pending: 0,
    failed: 0,
  });
  t.is((await app.ctx.parkings.findById(parking.id))?.access_mode, 'signed');

  const refusals: [string[], number, RegExp][] = [
    [
      ['parking', 'set-access', '--id', String(parking.id), '--access', 'signed'],
      1,
      /^parkbench: parking \d+ is already signed\n$/,
    ],
    [
      ['parking', 'set-access', '--id', String(parking.id), '--access', 'sealed'],
      1,
      /^parkbench: parking \d+ is signed: going back to sealed .*\n$/,
    ],
    [
      ['parking', 'set-access', '--id', String(parking.id), '--access', 'open'],
      2,
      /^parkbench: --access must be signed or sealed, got "open"\n$/,
    ],
    [
      ['parking', 'set-access', '--id', '424242', '--access', 'signed'],
      1,
      /^parkbench: no secured parking with id 424242\n$/,
    ],
    [
      ['parking', 'rotate-issuer', '--id', String((await addParking(app)).id)],
      1,
      /^parkbench: parking \d+ is sealed: it has no issuer key to rotate .*\n$/,
    ],
    [
      ['parking', 'rotate-issuer', '--id', String(parking.id), '--wait', 'soon'],
      2,
      /^parkbench: --wait must be an integer from 0 to 3600, got "soon"\n$/,
    ],
    [['smart-key', 'revoke', '--id', '777'], 1, /^parkbench: no smart key with id 777\n$/],
  ];
  for (const [args, code, stderr] of refusals) {
    const result = await admin(app, ...args);
    t.is(result.code, code, args.join(' '));
    t.regex(result.stderr, stderr, args.join(' '));
  }
});

test("another tool used higher sequences and filled the box's revocation list: REPLAY skips ahead, then REVOCATION_FULL fails, exit 4", async (t) => {
  const app = await benchNow(t);
  const parking = await addParking(app, { boxes: ['entrance'] });
  const [moduleId = 0] = parking.moduleIds;
  const running = await startBox(t, app, moduleId);
  // Another tool: four REVOKEs of 16 keys each with sequences 1000..1003.
  const until = Math.floor(app.clock.now() / 1000) + 3_600;
  for (let index = 0; index < 4; index++) {
    const entries = Array.from({ length: 16 }, (_, entry) => ({ keyId: 500_000 + index * 16 + entry, until }));
    await running.box.handleCommand(revoke(await provisioningOf(app, moduleId), 1_000 + index, entries));
  }
  const key = await keyOf(app, parking.id);
  const [result] = await whileApiRuns(app, [admin(app, 'smart-key', 'revoke', '--id', String(key), '--wait', '30')]);
  t.is(result?.code, 4, result?.stderr);
  t.regex(
    result?.stdout ?? '',
    new RegExp(
      `box ${moduleId}: REVOKE failed \\(REVOCATION_FULL: the box's revocation list is full; nothing changed on the box; 2 sends\\)`,
    ),
  );
  t.like(await one(app.ctx.store, 'SELECT state, replays, attempts, last_status FROM control_commands'), {
    state: 'failed',
    replays: 1,
    attempts: 2,
    last_status: 'REVOCATION_FULL',
  });
  t.true(
    ((await value(app.ctx.store, 'SELECT control_seq FROM control_commands')) as number) > 1_003,
    "the sequence skipped past the other tool's",
  );
});

test('admin control list: a pending REVOKE of a reserved box says what it waits for, as the API does', async (t) => {
  const app = await benchNow(t);
  const parking = await addParking(app, { boxes: ['entrance'] });
  const [moduleId = 0] = parking.moduleIds;
  const { token } = await addOperator(app.ctx.store, 'alice', app.clock.now());
  const reserved = await app.app.inject({
    method: 'POST',
    url: `/api/operator/boxes/${moduleId}/reservation`,
    headers: { authorization: `Bearer ${token}` },
    payload: { ttl_seconds: 600, note: 'CI job 123' },
  });
  t.is(reserved.statusCode, 201, reserved.body);
  const revoked = await admin(app, 'smart-key', 'revoke', '--id', String(await keyOf(app, parking.id)));
  t.is(revoked.code, 3, revoked.stderr);
  const listed = await admin(app, 'control', 'list', '--module-id', String(moduleId));
  t.is(listed.code, 0, listed.stderr);
  t.regex(listed.stdout, /REVOKE \(revoke, [^)]+\) pending, 0 sends; waiting: .*alice.*CI job 123/);
  const json = await admin(app, 'control', 'list', '--module-id', String(moduleId), '--json');
  const [command] = JSON.parse(json.stdout) as { waiting: { reason: string; until: string } | null }[];
  t.regex(command?.waiting?.reason ?? '', /alice/);
});
