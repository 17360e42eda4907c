// The flags of `parkbench conformance`, checked in one place: exactly one
// target, numbers in range, the provisioning file read and checked. Any
// problem is a UsageError (one line, exit code 2) before a link is opened.
import type { LevelWithSilent } from 'pino';
import { DEFAULT_TOPIC_PREFIX, Topics } from '../../lib/mqtt-topics.js';
import { parseSerialTarget, type SerialTarget } from '../../lib/serial-target.js';
import { isMacAddress } from '../../lib/wire-patterns.js';
import { U32_MAX, isIssuerPublicKey } from '../../firmware-protocol/index.js';
import type { IssuerKeys } from '../../conformance/box-under-test.js';
import type { ProtocolVersion } from '../../conformance/cases/index.js';
import { REVOCATION_CAPACITY_BOUND } from '../../conformance/cases/revocation-cases.js';
import { loadProvisioningFile, ProvisioningError, type Provisioning } from '../../lib/provisioning-file.js';
import { UsageError } from '../errors.js';
import type { RunCaptureFlags } from './run-capture.js';
import type { RecordFlags } from '../service/record-flags.js';
import { parseLogLevel } from '../logger.js';
import { messageOf } from '../../lib/message-of.js';
import type { BenchBox, PowerSpec } from '../../lib/bench/bench-file.js';
import { loadBench, passwordOf, pickBox } from './bench-box.js';

export interface ConformanceFlags extends RunCaptureFlags, RecordFlags {
  /** The bench file: with it, --box is a module_id of the file, not a provisioning file. */
  bench?: string;
  box?: string;
  serial?: string;
  ble?: string;
  mqtt?: string;
  moduleId?: string;
  username?: string;
  password?: string;
  /** Undefined: the bench file's, else MQTT_TOPIC_PREFIX, else parkbench. */
  topicPrefix?: string;
  answerMs: string;
  cycleMs: string;
  waitMs: string;
  controlSeq?: string;
  heldRevocations: string;
  protocol: string;
  restoreIssuerKey?: string;
  restoreIssuerKeyPrevious?: string;
  skipWearing?: boolean;
  json?: boolean;
  junit?: string;
  logLevel: string;
}

export type TargetChoice =
  | { readonly kind: 'serial'; readonly target: SerialTarget }
  | { readonly kind: 'ble'; readonly mac: string }
  | {
      readonly kind: 'mqtt';
      readonly url: string;
      readonly topics: Topics;
      readonly username?: string;
      readonly password?: string;
    };

export interface ConformanceOptions {
  readonly choice: TargetChoice;
  readonly provisioning: Provisioning;
  /** What the suite puts back with SET_ISSUER when it ends: the flags', else the file's. */
  readonly issuerKeys: IssuerKeys;
  readonly protocol: ProtocolVersion;
  readonly answerMs: number;
  readonly cycleMs: number;
  /** Longest wait for the box's first answer (its port to open, then an answer), ms. */
  readonly waitMs: number;
  readonly controlSeq: number;
  /** Live revocations the box holds that the suite does not add (--held-revocations). */
  readonly heldRevocations: number;
  readonly skipWearing: boolean;
  readonly json: boolean;
  readonly junit: string | undefined;
  readonly logLevel: LevelWithSilent;
  /** The box's power switch, from the bench file: the suite can then restart the box. */
  readonly power?: PowerSpec;
  /** The box's `limits:` in the bench file (soak's), as written, and where they are. */
  readonly benchLimits?: { readonly expressions: readonly string[]; readonly place: string };
  /** The box's `labels:` in the bench file (a recorded run's labels, under --label's). */
  readonly benchLabels?: Readonly<Record<string, string>>;
}

/** The highest --control-seq, the run's first control sequence: the ones
 * after it (a run uses 20 to 25) must stay within a u32. */
const MAX_FIRST_CONTROL_SEQ = U32_MAX - 0xffff;

export async function parseConformanceFlags(flags: ConformanceFlags, nowMs: number): Promise<ConformanceOptions> {
  // Flags check first, so a bad flag says so before the bench file is read.
  const linkFlags = [flags.serial, flags.ble, flags.mqtt].some((value) => value !== undefined);
  const flagChoice = flags.bench === undefined || linkFlags ? targetChoice(flags) : undefined;
  const answerMs = integer('--answer-ms', flags.answerMs, 1, 600_000);
  const cycleMs = integer('--cycle-ms', flags.cycleMs, 1, 3_600_000);
  const waitMs = integer('--wait-ms', flags.waitMs, 0, 3_600_000);
  const controlSeq =
    flags.controlSeq === undefined
      ? Math.floor(nowMs / 1000)
      : integer('--control-seq', flags.controlSeq, 1, MAX_FIRST_CONTROL_SEQ);
  const heldRevocations = integer('--held-revocations', flags.heldRevocations, 0, REVOCATION_CAPACITY_BOUND);
  const logLevel = parseLogLevel(flags.logLevel);
  const fromBench = flags.bench === undefined ? undefined : pickBox(await loadBench(flags.bench), flags.box);
  if (fromBench === undefined && flags.box === undefined)
    throw new UsageError("--box FILE is required: the box's provisioning file (or --bench FILE)");
  const provisioning = fromBench?.provisioning ?? (await loadBox(flags.box ?? ''));
  const fileName = fromBench === undefined ? (flags.box ?? '') : fromBench.provisioningPath;
  const moduleId = flags.moduleId === undefined ? undefined : integer('--module-id', flags.moduleId, 0, 0xffffffff);
  if (moduleId !== undefined && moduleId !== provisioning.moduleId) {
    throw new UsageError(`--module-id ${moduleId} is not the module_id of ${fileName} (${provisioning.moduleId})`);
  }
  // The bench's link unless a link flag is given: flags override the file.
  const choice = flagChoice ?? benchChoice(fromBench, flags);
  const issuerKeys = restoreIssuerKeys(flags, provisioning);
  const protocol = protocolVersion(flags.protocol);
  // Version 1 has ACCESS under K_park alone.
  if (protocol === 1 && provisioning.parkingKey === null)
    throw new UsageError(`--protocol 1 needs a box holding K_park: ${fileName} has parking_key null`);
  return {
    choice,
    provisioning,
    issuerKeys,
    protocol,
    answerMs,
    cycleMs,
    waitMs,
    controlSeq,
    heldRevocations,
    skipWearing: flags.skipWearing === true,
    json: flags.json === true,
    junit: flags.junit,
    logLevel,
    ...(fromBench?.power === undefined ? {} : { power: fromBench.power }),
    ...(fromBench === undefined || fromBench.limits.length === 0
      ? {}
      : { benchLimits: { expressions: fromBench.limits, place: fromBench.place } }),
    ...(fromBench === undefined ? {} : { benchLabels: fromBench.labels }),
  };
}

/** The link the bench file gives the box; --username and --password override an MQTT link's. */
function benchChoice(box: BenchBox | undefined, flags: ConformanceFlags): TargetChoice {
  if (box === undefined) return targetChoice(flags);
  const link = box.link;
  if (link.kind !== 'mqtt' && (flags.username !== undefined || flags.password !== undefined))
    throw new UsageError(`--username and --password go with an MQTT link: box ${box.moduleId} is on ${link.kind}`);
  switch (link.kind) {
    case 'serial':
      return { kind: 'serial', target: link.target };
    case 'ble':
      return { kind: 'ble', mac: link.mac };
    case 'mqtt': {
      let topics: Topics;
      try {
        topics = new Topics(flags.topicPrefix ?? link.topicPrefix ?? defaultTopicPrefix());
      } catch (error) {
        throw new UsageError(
          flags.topicPrefix === undefined
            ? `${box.place}.link.topic_prefix: ${messageOf(error)}`
            : `--topic-prefix: ${messageOf(error)}`,
        );
      }
      const username = flags.username ?? link.username;
      const password = flags.password ?? passwordOf(box);
      return {
        kind: 'mqtt',
        url: link.url,
        topics,
        ...(username === undefined ? {} : { username }),
        ...(password === undefined ? {} : { password }),
      };
    }
  }
}

function targetChoice(flags: ConformanceFlags): TargetChoice {
  const given = [flags.serial, flags.ble, flags.mqtt].filter((value) => value !== undefined).length;
  if (given !== 1) throw new UsageError('give exactly one target: --serial PATH[:BAUD], --ble MAC or --mqtt URL');
  if (
    flags.mqtt === undefined &&
    (flags.moduleId !== undefined || flags.username !== undefined || flags.password !== undefined)
  ) {
    throw new UsageError('--module-id, --username and --password go with --mqtt');
  }
  if (flags.serial !== undefined) {
    try {
      return { kind: 'serial', target: parseSerialTarget(flags.serial) };
    } catch (error) {
      throw new UsageError(messageOf(error));
    }
  }
  if (flags.ble !== undefined) {
    const mac = flags.ble.trim().toUpperCase();
    if (!isMacAddress(mac))
      throw new UsageError(`--ble wants a MAC address like AA:BB:CC:DD:EE:FF, got "${flags.ble}"`);
    return { kind: 'ble', mac };
  }
  const url = flags.mqtt ?? '';
  if (!/^(mqtts?|wss?|tcp):\/\/\S+$/.test(url)) throw new UsageError(`--mqtt must be an mqtt:// URL, got "${url}"`);
  let topics: Topics;
  try {
    topics = new Topics(flags.topicPrefix ?? defaultTopicPrefix());
  } catch (error) {
    throw new UsageError(`--topic-prefix: ${messageOf(error)}`);
  }
  return {
    kind: 'mqtt',
    url,
    topics,
    ...(flags.username === undefined ? {} : { username: flags.username }),
    ...(flags.password === undefined ? {} : { password: flags.password }),
  };
}

async function loadBox(path: string): Promise<Provisioning> {
  try {
    // Any box: sealed (parking_key), signed (issuer keys), or both; the cases follow what it holds.
    return await loadProvisioningFile(path);
  } catch (error) {
    if (error instanceof ProvisioningError) throw new UsageError(`${path}: ${error.message}`);
    throw error;
  }
}

/** --restore-issuer-key HEX [--restore-issuer-key-previous HEX|none]: the
 * box's issuer keys when they are no longer the provisioning file's (a box
 * re-keyed since); without them, the file's. */
function restoreIssuerKeys(flags: ConformanceFlags, provisioning: Provisioning): IssuerKeys {
  if (flags.restoreIssuerKey === undefined) {
    if (flags.restoreIssuerKeyPrevious !== undefined)
      throw new UsageError('--restore-issuer-key-previous goes with --restore-issuer-key');
    return { issuerKey: provisioning.issuerKey ?? null, issuerKeyPrevious: provisioning.issuerKeyPrevious ?? null };
  }
  const previous = flags.restoreIssuerKeyPrevious;
  return {
    issuerKey: issuerPublicKey('--restore-issuer-key', flags.restoreIssuerKey),
    issuerKeyPrevious:
      previous === undefined || previous.trim().toLowerCase() === 'none'
        ? null
        : issuerPublicKey('--restore-issuer-key-previous', previous),
  };
}

function issuerPublicKey(flag: string, raw: string): Buffer {
  const hex = raw.trim();
  if (!/^[0-9a-f]{128}$/i.test(hex))
    throw new UsageError(`${flag} must be 128 hex digits (a P-256 public key X || Y), got "${raw}"`);
  const key = Buffer.from(hex, 'hex');
  if (!isIssuerPublicKey(key)) throw new UsageError(`${flag} is not a point on P-256`);
  return key;
}

function protocolVersion(raw: string): ProtocolVersion {
  if (raw.trim() === '1') return 1;
  if (raw.trim() === '2') return 2;
  throw new UsageError(`--protocol must be 1 or 2, got "${raw}"`);
}

function integer(flag: string, raw: string, min: number, max: number): number {
  const value = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || value < min || value > max)
    throw new UsageError(`${flag} must be an integer from ${min} to ${max}, got "${raw}"`);
  return value;
}

/** The first topic level when neither --topic-prefix nor the bench file gives one. */
function defaultTopicPrefix(): string {
  return process.env.MQTT_TOPIC_PREFIX ?? DEFAULT_TOPIC_PREFIX;
}
