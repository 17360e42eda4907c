// Frames that must be refused before any rule of the box applies: bad tags,
// cut frames, unknown kinds, bad bodies, other versions (docs/protocol.md, Response frame, checks,
// steps 1, 2, 4 and 5). Each starts from a well-sealed command of its own;
// those refused before step 4 are sealed under any key when the box holds no
// K_park (the key cannot matter there).
import { randomBytes } from 'node:crypto';
import {
  ACCESS_FIXED_BODY_LENGTH,
  AccessBodyOffset,
  FrameKind,
  MIN_SIGNED_COMMAND_LENGTH,
  sealRawCommand,
  Status,
} from '../../firmware-protocol/index.js';
import { accessCommand, signedAccessCommand } from '../box-under-test.js';
import type { CaseRun } from '../suite-context.js';
import type { ConformanceCase } from './conformance-case.js';
import { validKey } from './access-cases.js';

/** K_park, or any key on a box without one (for frames refused before step 4). */
function sealingKey(run: CaseRun): Buffer {
  return run.box.parkingKey ?? randomBytes(16);
}

/** A valid ACCESS command around the suite's clock (the frame is refused
 * before its times matter). */
function wellSealedAccess(run: CaseRun): Buffer {
  const now = run.context.boxTimeNow() ?? Math.floor(run.context.clock.now() / 1000);
  return accessCommand(run.box, validKey(run, now), sealingKey(run));
}

function flipBit(frame: Buffer, offset: number): Buffer {
  const copy = Buffer.from(frame);
  copy[offset] = (copy[offset] ?? 0) ^ 0x01;
  return copy;
}

/** A valid ACCESS body, sealed under any kind and version byte. */
function rawAccess(run: CaseRun, overrides: { kind?: number; version?: number; plaintext?: Buffer }): Buffer {
  const body = Buffer.alloc(ACCESS_FIXED_BODY_LENGTH + 4);
  const now = Math.floor(run.context.clock.now() / 1000);
  body.writeUInt32BE(now - 3_600, AccessBodyOffset.notBefore);
  body.writeUInt32BE(now + 3_600, AccessBodyOffset.notAfter);
  body[AccessBodyOffset.maxEntries] = 3;
  body[AccessBodyOffset.maxExits] = 3;
  body[AccessBodyOffset.moduleCount] = 1;
  body.writeUInt32BE(run.box.moduleId, AccessBodyOffset.moduleIds);
  return sealRawCommand({
    key: sealingKey(run),
    kind: overrides.kind ?? FrameKind.ACCESS,
    keyId: run.context.keyId(),
    scope: run.box.parkingId,
    plaintext: overrides.plaintext ?? body,
    ...(overrides.version === undefined ? {} : { version: overrides.version }),
  });
}

function frameCase(
  name: string,
  step: string,
  status: Status,
  frame: (run: CaseRun) => Buffer,
  needsParkingKey = false,
  version2 = false,
): ConformanceCase {
  return {
    name,
    step,
    needsParkingKey,
    version2,
    expected: `0x${status.toString(16).padStart(2, '0')}`,
    async run(run) {
      // kind and key_id are echoed only when steps 1 and 2 passed; remaining is
      // 0xFF before step 5 passed: expectedFields works both out from the frame.
      await run.send(frame(run), { status });
    },
  };
}

export const frameCases: readonly ConformanceCase[] = [
  frameCase(
    'tampered tag',
    'checks, step 4',
    Status.AUTH_FAILED,
    (run) => {
      const frame = wellSealedAccess(run);
      return flipBit(frame, frame.length - 1);
    },
    true,
  ),
  frameCase(
    'tampered body (ciphertext)',
    'checks, step 4',
    Status.AUTH_FAILED,
    (run) => flipBit(wellSealedAccess(run), 22),
    true,
  ),
  frameCase(
    'frame cut short, 37 bytes (30 or more)',
    'checks, steps 2 and 4',
    Status.AUTH_FAILED,
    (run) => wellSealedAccess(run).subarray(0, 37),
    true,
  ),
  frameCase('empty frame', 'checks, step 1', Status.MALFORMED, () => Buffer.alloc(0)),
  frameCase('frame under 30 bytes (29)', 'checks, step 2', Status.MALFORMED, (run) =>
    wellSealedAccess(run).subarray(0, 29),
  ),
  // Version 1 sent kind 0x04 here; version 2 names it ACCESS_SIGNED, so the
  // unknown kind is now 0x07 (both versions answer it MALFORMED).
  frameCase('unknown kind 0x07', 'checks, step 2', Status.MALFORMED, (run) => rawAccess(run, { kind: 0x07 })),
  frameCase(
    `ACCESS_SIGNED under ${MIN_SIGNED_COMMAND_LENGTH} bytes (${MIN_SIGNED_COMMAND_LENGTH - 1})`,
    'checks, step 2',
    Status.MALFORMED,
    (run) => {
      const now = run.context.boxTimeNow() ?? Math.floor(run.context.clock.now() / 1000);
      return signedAccessCommand(run.box, run.context.issuers.current.privateKey, validKey(run, now)).subarray(
        0,
        MIN_SIGNED_COMMAND_LENGTH - 1,
      );
    },
    false,
    true,
  ),
  frameCase(
    'ACCESS with module_count 0',
    'checks, step 5',
    Status.MALFORMED,
    (run) => {
      const body = Buffer.alloc(ACCESS_FIXED_BODY_LENGTH);
      body.writeUInt32BE(1, AccessBodyOffset.notBefore);
      body.writeUInt32BE(0xffffffff, AccessBodyOffset.notAfter);
      body[AccessBodyOffset.maxEntries] = 3;
      body[AccessBodyOffset.maxExits] = 3;
      return rawAccess(run, { plaintext: body });
    },
    true,
  ),
  frameCase('version 2', 'checks, step 1', Status.UNSUPPORTED_VERSION, (run) => rawAccess(run, { version: 2 })),
];
