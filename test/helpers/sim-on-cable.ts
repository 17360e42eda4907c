// `parkbench sim` on a socat pty pair with its state in a folder, not yet
// started: the simulator tests that kill it or switch its power start it
// themselves with `startCli(t, args)`, once or twice on the same state, and
// talk to it on the test's end of the cable. Declare their tests with
// `testNeeding('socat', test)` (requires.ts).
import type { ExecutionContext } from 'ava';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SerialPort } from 'serialport';
import { encodeLinkFrame, FrameKind, LinkType, sealCommand } from '../../firmware-protocol/index.js';
import { LinkFrameParser, type LinkFrame } from '../../lib/link-frame-stream.js';
import { ptyPairForTest } from './pty-pair.js';

export interface SimOnCable {
  /** A folder of the test's: the box file, and the box's state in `state/`. */
  readonly directory: string;
  /** `parkbench sim` on the cable's other end with its state in the folder, for `startCli` (started by the test, maybe twice). */
  readonly args: string[];
  /** The test's end of the cable, and the responses and status reports it read. */
  readonly port: SerialPort;
  readonly responses: LinkFrame[];
  readonly reports: LinkFrame[];
  /** An ACCESS sealed for the box with that key id, valid 10 minutes either side of now, 5 entries and exits. */
  readonly command: (keyId: number) => Buffer;
  /** Writes a command's link frame to the cable. */
  readonly send: (frame: Buffer) => void;
}

/** A box file of `moduleId` (no MQTT), a pty pair, and the test's end of it read as link frames; `extra`: more flags of `parkbench sim`. */
export async function simOnCable(
  t: ExecutionContext,
  moduleId: number,
  extra: readonly string[] = [],
): Promise<SimOnCable> {
  const directory = await mkdtemp(join(tmpdir(), 'pb-sim-cable-'));
  t.teardown(() => rm(directory, { recursive: true, force: true }));
  const parkingKey = randomBytes(16);
  const boxFile = join(directory, 'box.json');
  await writeFile(
    boxFile,
    JSON.stringify({
      module_id: moduleId,
      parking_id: 7,
      direction: 'entrance',
      mac_address: '00:07:80:AA:96:02',
      parking_key: parkingKey.toString('hex'),
      parking_key_next: null,
      box_key: randomBytes(16).toString('hex'),
      skew_seconds: 120,
      min_battery_mv: 3300,
      mqtt: null,
    }),
  );
  const pair = await ptyPairForTest(t);
  const port = new SerialPort({ path: pair.b, baudRate: 115_200 });
  t.teardown(() => new Promise<void>((resolve) => (port.isOpen ? port.close(() => resolve()) : resolve())));
  const responses: LinkFrame[] = [];
  const reports: LinkFrame[] = [];
  port.pipe(new LinkFrameParser()).on('data', (frame: LinkFrame) => {
    if (frame.type === LinkType.RESPONSE) responses.push(frame);
    if (frame.type === LinkType.STATUS_REPORT) reports.push(frame);
  });
  const now = Math.floor(Date.now() / 1000);
  const command = (keyId: number): Buffer =>
    sealCommand({
      kind: FrameKind.ACCESS,
      key: parkingKey,
      keyId,
      scope: 7,
      body: { notBefore: now - 600, notAfter: now + 600, maxEntries: 5, maxExits: 5, moduleIds: [moduleId] },
    });
  const args = [
    'sim',
    '--box',
    boxFile,
    '--serial',
    pair.a,
    '--state-dir',
    join(directory, 'state'),
    '--log-level',
    'warn',
    ...extra,
  ];
  return {
    directory,
    args,
    port,
    responses,
    reports,
    command,
    send: (frame) => port.write(encodeLinkFrame(LinkType.COMMAND, frame)),
  };
}
