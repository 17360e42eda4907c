// The bench file (docs/bench.md, The bench file): YAML naming the boxes on a
// bench, each with its provisioning file, its link, its power switch, its
// labels and its soak limits. Loaded once, checked whole before anything is
// opened: the YAML, then the schema (bench-schema.ts, ajv), then what the
// schema cannot say (the provisioning files read, one link per box, MAC
// addresses, URLs). Every problem is one BenchFileError line naming the
// place: `bench.yaml:12: boxes[0].link: ...`. Secrets are never in the file:
// an MQTT link names the environment variable holding its password
// (`password_env`), read when the box is used (mqttPassword).
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { LineCounter, parseDocument, isMap, isNode, isPair, isScalar, type Document, type Node } from 'yaml';
import { loadProvisioningFile, ProvisioningError, type Provisioning } from '../provisioning-file.js';
import { messageOf } from '../message-of.js';
import { DEFAULT_BAUD_RATE, type SerialTarget } from '../serial-target.js';
import { isMacAddress } from '../wire-patterns.js';
import { benchSchema } from './bench-schema.js';

/** A bench file that cannot be used: one line, naming the file and the place in it. */
export class BenchFileError extends Error {
  override readonly name = 'BenchFileError';
}

export type BenchLink =
  | { readonly kind: 'serial'; readonly target: SerialTarget }
  | { readonly kind: 'ble'; readonly mac: string }
  | {
      readonly kind: 'mqtt';
      readonly url: string;
      readonly username?: string;
      /** The environment variable holding the password (mqttPassword reads it). */
      readonly passwordEnv?: string;
      readonly topicPrefix?: string;
    };

/** Defaults of a `power:` entry, ms. */
export const POWER_DEFAULTS = {
  /** After power on, before the first command. */
  settleMs: 0,
  /** Off in a cycle, for switches without a cycle of their own. */
  offMs: 2_000,
  /** A command (command, usbrelay, uhubctl) or an HTTP request may take this long. */
  timeoutMs: 10_000,
} as const;

interface PowerTimes {
  readonly settleMs: number;
  readonly offMs: number;
  readonly timeoutMs: number;
}

export type PowerSpec = PowerTimes &
  (
    | { readonly driver: 'command'; readonly on: string; readonly off: string; readonly cycle?: string }
    | { readonly driver: 'usbrelay'; readonly relay: string }
    | { readonly driver: 'uhubctl'; readonly hub: string; readonly port: number }
    | {
        readonly driver: 'http';
        readonly url: string;
        readonly api: 'shelly' | 'tasmota';
        readonly switch: number;
        /** The environment variable holding the plug's web password, and its place in the file. */
        readonly passwordEnv?: { readonly name: string; readonly place: string };
      }
    | { readonly driver: 'prompt' }
  );

export interface BenchBox {
  readonly moduleId: number;
  /** The provisioning file's path, resolved against the bench file's folder. */
  readonly provisioningPath: string;
  readonly provisioning: Provisioning;
  readonly link: BenchLink;
  readonly power?: PowerSpec;
  /** Free-form labels (firmware, hardware, ...), as strings. */
  readonly labels: Readonly<Record<string, string>>;
  /** `parkbench soak`'s limit expressions (answer_ms.p99<=250), unparsed here. */
  readonly limits: readonly string[];
  /** `bench.yaml:7: boxes[1]`: the prefix of a later error about this box. */
  readonly place: string;
  /** The place of the link's password_env, for mqttPassword's error. */
  readonly passwordEnvPlace?: string;
}

export interface BenchFile {
  /** The bench file's path as given. */
  readonly path: string;
  readonly boxes: readonly BenchBox[];
}

/** What the YAML holds, as the schema has checked it. */
interface RawBox {
  module_id: number;
  provisioning: string;
  link: {
    serial?: string;
    baud?: number;
    ble?: string;
    mqtt?: string;
    username?: string;
    password_env?: string;
    topic_prefix?: string;
  };
  power?: Record<string, unknown> & { driver: PowerSpec['driver'] };
  labels?: Record<string, string | number | boolean>;
  limits?: string[];
}

let validator: Promise<ValidateFunction<{ boxes: RawBox[] }>> | undefined;

/** The schema's validator, ajv loaded and the schema compiled on the first
 * bench file read (some 65 ms): a command run without --bench pays nothing.
 * Every error, so the one reported can be the most telling: an unknown key
 * before the missing one it was probably meant to be. */
function benchValidator(): Promise<ValidateFunction<{ boxes: RawBox[] }>> {
  validator ??= import('ajv').then(({ Ajv }) =>
    new Ajv({ discriminator: true, verbose: true, allErrors: true, allowUnionTypes: true }).compile<{
      boxes: RawBox[];
    }>(benchSchema),
  );
  return validator;
}

export async function loadBenchFile(path: string): Promise<BenchFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : messageOf(error);
    throw new BenchFileError(`${path}: cannot read the bench file: ${reason}`);
  }
  return parseBenchFile(text, path);
}

/** The bench of `text`, the contents of the file at `path` (provisioning files are read relative to it). */
export async function parseBenchFile(text: string, path: string): Promise<BenchFile> {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const syntax = document.errors[0];
  if (syntax !== undefined) {
    const at = lineCounter.linePos(syntax.pos[0]);
    throw new BenchFileError(`${path}:${at.line}:${at.col}: ${firstLine(syntax.message)}`);
  }
  const places = new Places(path, document, lineCounter);
  const data: unknown = document.toJS();
  const validate = await benchValidator();
  if (!validate(data)) throw new BenchFileError(places.schemaError(mostTelling(validate.errors ?? [])));
  const folder = dirname(path);
  const boxes: BenchBox[] = [];
  for (const [index, raw] of data.boxes.entries()) {
    const at = (...keys: (string | number)[]): string => places.at(['boxes', index, ...keys]);
    const provisioningPath = resolve(folder, raw.provisioning);
    let provisioning: Provisioning;
    try {
      provisioning = await loadProvisioningFile(provisioningPath);
    } catch (error) {
      if (error instanceof ProvisioningError || error instanceof Error)
        throw new BenchFileError(`${at('provisioning')}: ${messageOf(error)}`);
      throw error;
    }
    if (provisioning.moduleId !== raw.module_id)
      throw new BenchFileError(
        `${at('module_id')}: ${raw.module_id} is not the module_id of ${raw.provisioning} (${provisioning.moduleId})`,
      );
    const duplicate = boxes.find((box) => box.moduleId === raw.module_id);
    if (duplicate !== undefined)
      throw new BenchFileError(`${at('module_id')}: box ${raw.module_id} is on the bench twice (${duplicate.place})`);
    const link = linkOf(raw.link, at, folder);
    if (link.kind === 'serial') {
      const same = boxes.find((box) => box.link.kind === 'serial' && box.link.target.path === link.target.path);
      if (same !== undefined)
        throw new BenchFileError(`${at('link', 'serial')}: ${link.target.path} is also box ${same.moduleId}'s port`);
    }
    const power = raw.power === undefined ? undefined : powerOf(raw.power, at);
    boxes.push({
      moduleId: raw.module_id,
      provisioningPath,
      provisioning,
      link,
      ...(power === undefined ? {} : { power }),
      labels: Object.fromEntries(Object.entries(raw.labels ?? {}).map(([key, value]) => [key, String(value)])),
      limits: raw.limits ?? [],
      place: at(),
      ...(raw.link.password_env === undefined ? {} : { passwordEnvPlace: at('link', 'password_env') }),
    });
  }
  return { path, boxes };
}

/** The box `moduleId` of the bench; without one, the bench's only box. */
export function benchBox(bench: BenchFile, moduleId: number | undefined): BenchBox {
  if (moduleId === undefined) {
    const only = bench.boxes[0];
    if (bench.boxes.length !== 1 || only === undefined)
      throw new BenchFileError(
        `${bench.path}: holds ${bench.boxes.length} boxes (${bench.boxes.map((box) => box.moduleId).join(', ')}): name one with --box MODULE_ID`,
      );
    return only;
  }
  const box = bench.boxes.find((each) => each.moduleId === moduleId);
  if (box === undefined)
    throw new BenchFileError(
      `${bench.path}: no box ${moduleId} (it holds ${bench.boxes.map((each) => each.moduleId).join(', ')})`,
    );
  return box;
}

/** The password of an MQTT link, from the environment variable its
 * `password_env` names; undefined when it names none. */
export function mqttPassword(box: BenchBox, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (box.link.kind !== 'mqtt' || box.link.passwordEnv === undefined) return undefined;
  const value = env[box.link.passwordEnv];
  if (value === undefined)
    throw new BenchFileError(
      `${box.passwordEnvPlace ?? box.place}: the environment variable ${box.link.passwordEnv} is not set (the MQTT password of box ${box.moduleId})`,
    );
  return value;
}

/** The web password of an http power switch, from the environment variable
 * its `password_env` names; undefined when it names none. */
export function powerPassword(power: PowerSpec | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (power?.driver !== 'http' || power.passwordEnv === undefined) return undefined;
  const value = env[power.passwordEnv.name];
  if (value === undefined)
    throw new BenchFileError(
      `${power.passwordEnv.place}: the environment variable ${power.passwordEnv.name} is not set (the plug's web password)`,
    );
  return value;
}

/** The error to report: an unknown key first, else the first. */
function mostTelling(errors: readonly ErrorObject[]): ErrorObject | undefined {
  return errors.find((error) => error.keyword === 'additionalProperties') ?? errors[0];
}

type At = (...keys: (string | number)[]) => string;

/** The box's link; a relative serial path is resolved against the bench
 * file's folder, as the provisioning file's path is. */
function linkOf(raw: RawBox['link'], at: At, folder: string): BenchLink {
  const kinds = (['serial', 'ble', 'mqtt'] as const).filter((kind) => raw[kind] !== undefined);
  const [kind] = kinds;
  if (kind === undefined || kinds.length > 1)
    throw new BenchFileError(
      `${at('link')}: give exactly one of serial, ble or mqtt${kinds.length > 1 ? ` (got ${kinds.join(', ')})` : ''}`,
    );
  const extra = (keys: readonly (keyof RawBox['link'])[]): void => {
    const stray = keys.find((key) => raw[key] !== undefined);
    if (stray !== undefined) throw new BenchFileError(`${at('link', stray)}: goes with mqtt, not ${kind}`);
  };
  if (kind === 'serial') {
    extra(['username', 'password_env', 'topic_prefix']);
    return { kind, target: { path: resolve(folder, raw.serial ?? ''), baudRate: raw.baud ?? DEFAULT_BAUD_RATE } };
  }
  if (raw.baud !== undefined) throw new BenchFileError(`${at('link', 'baud')}: goes with serial, not ${kind}`);
  if (kind === 'ble') {
    extra(['username', 'password_env', 'topic_prefix']);
    const mac = (raw.ble ?? '').trim().toUpperCase();
    if (!isMacAddress(mac))
      throw new BenchFileError(
        `${at('link', 'ble')}: must be a MAC address like AA:BB:CC:DD:EE:FF, got "${raw.ble ?? ''}"`,
      );
    return { kind, mac };
  }
  const url = raw.mqtt ?? '';
  if (!/^(mqtts?|wss?|tcp):\/\/\S+$/.test(url))
    throw new BenchFileError(`${at('link', 'mqtt')}: must be a broker URL (mqtt://host:port), got "${url}"`);
  return {
    kind,
    url,
    ...(raw.username === undefined ? {} : { username: raw.username }),
    ...(raw.password_env === undefined ? {} : { passwordEnv: raw.password_env }),
    ...(raw.topic_prefix === undefined ? {} : { topicPrefix: raw.topic_prefix }),
  };
}

function powerOf(raw: NonNullable<RawBox['power']>, at: At): PowerSpec {
  const number = (key: string, fallback: number): number => (typeof raw[key] === 'number' ? raw[key] : fallback);
  const string = (key: string): string => (typeof raw[key] === 'string' ? raw[key] : '');
  const times: PowerTimes = {
    settleMs: number('settle_ms', POWER_DEFAULTS.settleMs),
    offMs: number('off_ms', POWER_DEFAULTS.offMs),
    timeoutMs: number('timeout_ms', POWER_DEFAULTS.timeoutMs),
  };
  switch (raw.driver) {
    case 'command':
      return {
        ...times,
        driver: 'command',
        on: string('on'),
        off: string('off'),
        ...(raw.cycle === undefined ? {} : { cycle: string('cycle') }),
      };
    case 'usbrelay':
      return { ...times, driver: 'usbrelay', relay: string('relay') };
    case 'uhubctl':
      return { ...times, driver: 'uhubctl', hub: string('hub'), port: number('port', 0) };
    case 'http': {
      const url = string('url');
      let parsed: URL | undefined;
      try {
        parsed = new URL(url);
      } catch {
        parsed = undefined;
      }
      if (parsed === undefined || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:'))
        throw new BenchFileError(`${at('power', 'url')}: must be an http:// or https:// URL, got "${url}"`);
      return {
        ...times,
        driver: 'http',
        url,
        api: string('api') === 'tasmota' ? 'tasmota' : 'shelly',
        switch: number('switch', 0),
        ...(raw.password_env === undefined
          ? {}
          : { passwordEnv: { name: string('password_env'), place: at('power', 'password_env') } }),
      };
    }
    case 'prompt':
      return { ...times, driver: 'prompt' };
  }
}

const DRIVERS = 'command, usbrelay, uhubctl, http or prompt';

/** Places in the file: `bench.yaml:12: boxes[0].link`, the line from the YAML node. */
class Places {
  constructor(
    private readonly path: string,
    private readonly document: Document,
    private readonly lines: LineCounter,
  ) {}

  /** The place of the value at `keys` (of its key, for `keyOf`). */
  at(keys: readonly (string | number)[], keyOf?: string): string {
    const name = keyOf === undefined ? dotted(keys) : dotted([...keys, keyOf]);
    const line = this.#line(keys, keyOf);
    return `${this.path}${line === undefined ? '' : `:${line}`}: ${name === '' ? '(the top level)' : name}`;
  }

  schemaError(error: ErrorObject | undefined): string {
    if (error === undefined) return `${this.path}: does not fit the bench file's schema`;
    const keys = error.instancePath
      .split('/')
      .slice(1)
      .map((segment) => {
        const key = segment.replace(/~1/g, '/').replace(/~0/g, '~');
        return /^\d+$/.test(key) ? Number(key) : key;
      });
    const params = error.params as Record<string, unknown>;
    const parent = error.parentSchema as { properties?: Record<string, unknown>; description?: string } | undefined;
    switch (error.keyword) {
      case 'additionalProperties': {
        const key = String(params.additionalProperty);
        if (key === 'password')
          return `${this.at(keys, key)}: no password in the bench file: put it in an environment variable and name that with password_env`;
        const known = Object.keys(parent?.properties ?? {});
        return `${this.at(keys, key)}: unknown key${known.length > 0 ? ` (known here: ${known.join(', ')})` : ''}`;
      }
      case 'required': {
        const missing = String(params.missingProperty);
        return `${this.at(keys)}: missing ${missing}${missing === 'driver' ? ` (${DRIVERS})` : ''}`;
      }
      case 'discriminator':
        return `${this.at([...keys, 'driver'])}: ${
          params.error === 'mapping'
            ? `unknown driver "${String(params.tagValue)}" (${DRIVERS})`
            : `must name the driver (${DRIVERS})`
        }`;
      case 'pattern':
        return `${this.at(keys)}: must be ${parent?.description ?? `like ${String(params.pattern)}`}, got "${String(error.data)}"`;
      case 'enum':
        return `${this.at(keys)}: must be one of ${(params.allowedValues as unknown[]).map(String).join(', ')}, got "${String(error.data)}"`;
      case 'const':
        return `${this.at(keys)}: must be ${JSON.stringify(params.allowedValue)}`;
      default:
        return `${this.at(keys)}: ${error.message ?? 'does not fit the schema'}${error.keyword === 'type' ? `, got ${JSON.stringify(error.data)}` : ''}`;
    }
  }

  #line(keys: readonly (string | number)[], keyOf?: string): number | undefined {
    let node: unknown = keys.length === 0 ? this.document.contents : this.document.getIn(keys, true);
    if (keyOf !== undefined && isMap(node)) {
      const pair = node.items.find((item) => isPair(item) && isScalar(item.key) && item.key.value === keyOf);
      if (pair !== undefined) node = pair.key;
    }
    if (!isNode(node)) {
      // A value the YAML leaves out: the line of its parent.
      if (keys.length === 0) return undefined;
      return this.#line(keys.slice(0, -1));
    }
    const range = (node as Node).range;
    return range === undefined || range === null ? undefined : this.lines.linePos(range[0]).line;
  }
}

function dotted(keys: readonly (string | number)[]): string {
  return keys.map((key, index) => (typeof key === 'number' ? `[${key}]` : index === 0 ? key : `.${key}`)).join('');
}

function firstLine(text: string): string {
  return (text.split('\n')[0] ?? text).replace(/ at line \d+, column \d+:?$/, '');
}
