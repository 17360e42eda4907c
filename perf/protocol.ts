// `npm run perf:protocol`: operations per second of the box protocol's hot
// paths, against a bare node:crypto aes-128-ccm seal of the same size as an
// ACCESS command, measured in the same run. Each figure is the median of
// several timed rounds after a warm-up (a 2-core machine is noisy).
// Target: open + decide ACCESS >= 100,000/s and within 3x of the bare cipher.
// Target: sign ACCESS_SIGNED within 1.3x of a bare crypto.sign, and
// verify + decide ACCESS_SIGNED within 1.3x of a bare crypto.verify, of the
// same bytes, in the same run.
import { createCipheriv, sign, verify } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import {
  Barrier,
  type BoxConfig,
  type BoxState,
  FrameKind,
  LinkType,
  decide,
  decodeLinkFrame,
  encodeLinkFrame,
  initialBoxState,
  issuerPrivateKeyObject,
  issuerPublicKeyObject,
  issuerPublicKeyOf,
  sealCommand,
  signAccessCommand,
  sealResponse,
  verifyResponse,
  verifyResponses,
} from '../firmware-protocol/index.js';

const ROUNDS = 7;
const ROUND_MS = 300;
const WARMUP_MS = 500;

const parkingKey = Buffer.from('000102030405060708090a0b0c0d0e0f', 'hex');
const boxKey = Buffer.from('a0a1a2a3a4a5a6a7a8a9aaabacadaeaf', 'hex');
const T0 = 1_767_225_600;
const body = { notBefore: T0, notAfter: T0 + 7200, maxEntries: 3, maxExits: 3, moduleIds: [101, 102] };
const config: BoxConfig = {
  moduleId: 101,
  parkingId: 7,
  direction: 'entrance',
  parkingKey,
  parkingKeyNext: null,
  boxKey,
  skewSeconds: 120,
  minBatteryMv: 3300,
};
const issuerPrivate = Buffer.from('0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20', 'hex');
const issuerPublic = issuerPublicKeyOf(issuerPrivate);
const state: BoxState = { ...initialBoxState({ issuerKey: issuerPublic }), boxSeq: 10 };
const conditions = { boxTime: T0 + 60, batteryMv: 3700, barrier: Barrier.CLOSED, jammed: false };

const command = sealCommand({ key: parkingKey, kind: FrameKind.ACCESS, keyId: 42, scope: 7, body });
const plaintextLength = command.length - 30;
const firstDecision = decide(config, state, conditions, command);
if (firstDecision.status !== 0) throw new Error(`benchmark setup: decide gave status ${firstDecision.status}`);
const responseFields = firstDecision.fields;
const responseFrame = firstDecision.response;

/** Indexes in `operations` of the bare crypto.sign and crypto.verify; each is
 * followed by the operation compared with it. */
const SIGN_BASELINE = 7;
const VERIFY_BASELINE = 9;
let sink = 0; // keeps results alive so the work is not optimized away

/** A batch of box logs as POST /api/box_logs gets them: 50 responses of one box. */
const BATCH = 50;
const batch = Array.from({ length: BATCH }, (_, i) => ({
  response: sealResponse({ ...responseFields, boxSeq: responseFields.boxSeq + i }, boxKey, command),
  command,
}));

const signedCommand = signAccessCommand({ privateKey: issuerPrivate, keyId: 42, scope: 7, body });
if (decide(config, state, conditions, signedCommand).status !== 0)
  throw new Error('benchmark setup: ACCESS_SIGNED not accepted');
const signedPart = signedCommand.subarray(0, signedCommand.length - 64);
const signature = signedCommand.subarray(signedCommand.length - 64);
// The bare calls get node's KeyObjects made once, as a careful caller would.
const bareSignOptions = { key: issuerPrivateKeyObject(issuerPrivate), dsaEncoding: 'ieee-p1363' } as const;
const bareVerifyOptions = { key: issuerPublicKeyObject(issuerPublic), dsaEncoding: 'ieee-p1363' } as const;

const baselinePlain = Buffer.alloc(plaintextLength, 0x5a);
const baselineAad = command.subarray(0, 22);
const baselineNonce = command.subarray(10, 22);

/** `per`: responses per run, so that figures are per response. `baseline`:
 * the index of the operation this one is compared with (default 0). */
const operations: { name: string; run: () => void; per?: number; baseline?: number }[] = [
  {
    name: `baseline: bare aes-128-ccm seal (${plaintextLength}-byte plaintext, 22-byte AAD)`,
    run: () => {
      const cipher = createCipheriv('aes-128-ccm', parkingKey, baselineNonce, { authTagLength: 8 });
      cipher.setAAD(baselineAad, { plaintextLength });
      sink += cipher.update(baselinePlain).length + cipher.final().length + cipher.getAuthTag().length;
    },
  },
  {
    name: 'seal ACCESS (2 modules, random nonce)',
    run: () => {
      sink += sealCommand({ key: parkingKey, kind: FrameKind.ACCESS, keyId: 42, scope: 7, body }).length;
    },
  },
  {
    name: 'open + decide ACCESS (incl. sealing the response)',
    run: () => {
      sink += decide(config, state, conditions, command).status;
    },
  },
  {
    name: 'seal + verify a response',
    run: () => {
      const frame = sealResponse(responseFields, boxKey, command);
      sink += verifyResponse(frame, boxKey, command) ? 1 : 0;
    },
  },
  {
    name: `verify ${BATCH} responses of one box, one by one (per response)`,
    run: () => {
      for (const { response, command: answered } of batch) sink += verifyResponse(response, boxKey, answered) ? 1 : 0;
    },
    per: BATCH,
  },
  {
    name: `verify ${BATCH} responses of one box, verifyResponses (per response)`,
    run: () => {
      for (const ok of verifyResponses(batch, boxKey)) sink += ok ? 1 : 0;
    },
    per: BATCH,
  },
  {
    name: 'serial encode + decode of a response frame',
    run: () => {
      sink += decodeLinkFrame(encodeLinkFrame(LinkType.RESPONSE, responseFrame)).payload.length;
    },
  },
  {
    name: `baseline: bare crypto.sign P-256 of the same ${signedPart.length} bytes`,
    run: () => {
      sink += sign('sha256', signedPart, bareSignOptions).length;
    },
    baseline: SIGN_BASELINE,
  },
  {
    name: 'sign ACCESS_SIGNED (2 modules, random nonce, key as 32 bytes)',
    run: () => {
      sink += signAccessCommand({ privateKey: issuerPrivate, keyId: 42, scope: 7, body }).length;
    },
    baseline: SIGN_BASELINE,
  },
  {
    name: `baseline: bare crypto.verify P-256 of the same ${signedPart.length} bytes`,
    run: () => {
      sink += verify('sha256', signedPart, bareVerifyOptions, signature) ? 1 : 0;
    },
    baseline: VERIFY_BASELINE,
  },
  {
    name: 'verify + decide ACCESS_SIGNED (incl. sealing the response)',
    run: () => {
      sink += decide(config, state, conditions, signedCommand).status;
    },
    baseline: VERIFY_BASELINE,
  },
];

/** Runs `run` for about `ms` milliseconds; returns operations per second. */
function measure(run: () => void, ms: number): number {
  let count = 0;
  const start = performance.now();
  let elapsed: number;
  do {
    for (let i = 0; i < 200; i++) run();
    count += 200;
    elapsed = performance.now() - start;
  } while (elapsed < ms);
  return (count / elapsed) * 1000;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

const format = (n: number): string => Math.round(n).toLocaleString('en-US');

function main(): void {
  process.stdout.write(
    `node ${process.version}; ${ROUNDS} rounds of ${ROUND_MS} ms per operation after ${WARMUP_MS} ms warm-up; median ops/s\n`,
  );
  for (const op of operations) measure(op.run, WARMUP_MS);
  const samples = operations.map(() => [] as number[]);
  // Interleave operations round by round so machine noise spreads evenly.
  for (let round = 0; round < ROUNDS; round++)
    operations.forEach((op, i) => samples[i]?.push(measure(op.run, ROUND_MS) * (op.per ?? 1)));
  const medians = samples.map(median);
  const baseline = medians[0] ?? 1;
  const width = Math.max(...operations.map((op) => op.name.length));
  operations.forEach((op, i) => {
    const opsPerSecond = medians[i] ?? 0;
    const own = op.baseline ?? 0;
    const ratio = (medians[own] ?? 1) / opsPerSecond;
    const spread = `min ${format(Math.min(...(samples[i] ?? [0])))} max ${format(Math.max(...(samples[i] ?? [0])))}`;
    process.stdout.write(
      `${op.name.padEnd(width)}  ${format(opsPerSecond).padStart(10)} ops/s  ${i === own ? 'baseline' : `${ratio.toFixed(2)}x the baseline's cost`}  (${spread})\n`,
    );
  });
  const openDecide = medians[2] ?? 0;
  const ratio = baseline / openDecide;
  const verdict = openDecide >= 100_000 && ratio <= 3 ? 'met' : 'NOT met';
  process.stdout.write(
    `target open + decide >= 100,000/s and within 3x of the bare cipher: ${verdict} (${format(openDecide)}/s, ${ratio.toFixed(2)}x)\n`,
  );
  const signRatio = (medians[SIGN_BASELINE] ?? 1) / (medians[SIGN_BASELINE + 1] ?? 1);
  const verifyRatio = (medians[VERIFY_BASELINE] ?? 1) / (medians[VERIFY_BASELINE + 1] ?? 1);
  process.stdout.write(
    `target sign ACCESS_SIGNED within 1.3x of bare crypto.sign: ${signRatio <= 1.3 ? 'met' : 'NOT met'} (${signRatio.toFixed(2)}x)\n`,
  );
  process.stdout.write(
    `target verify + decide ACCESS_SIGNED within 1.3x of bare crypto.verify: ${verifyRatio <= 1.3 ? 'met' : 'NOT met'} (${verifyRatio.toFixed(2)}x)\n`,
  );
  if (sink === -1) process.stdout.write('\n');
}

main();
