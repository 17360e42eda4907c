// Shared by the conformance tests: a provisioning file on disk (a box of a
// sealed parking, of a signed one, or holding both), the fast barrier
// timings of the simulator, the size of a report, and a small XML
// well-formedness check.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import { generateIssuerKeyPair } from '../../firmware-protocol/index.js';
import { casesFor } from '../../conformance/cases/index.js';
import { parseProvisioning, type Provisioning } from '../../lib/provisioning-file.js';

export interface BoxFile {
  readonly path: string;
  readonly directory: string;
  readonly document: Record<string, unknown>;
  readonly provisioning: Provisioning;
}

/** What a box holds (docs/protocol.md, Keys): K_park, issuer keys, or both. */
export type BoxKind = 'sealed' | 'signed' | 'both';

/** Provisioning fields of a box of that kind: the issuer keys are the
 * parking's (two of them: the suite must put both back). */
export function keysOf(kind: BoxKind): Record<string, unknown> {
  const issuer = {
    issuer_key: generateIssuerKeyPair().publicKey.toString('hex'),
    issuer_key_previous: generateIssuerKeyPair().publicKey.toString('hex'),
  };
  if (kind === 'sealed') return { issuer_key: null, issuer_key_previous: null };
  if (kind === 'signed') return { parking_key: null, ...issuer };
  return issuer;
}

/** A box's provisioning file in a temporary folder removed after the test. */
export async function boxFile(
  t: ExecutionContext,
  moduleId: number,
  overrides: Record<string, unknown> = {},
): Promise<BoxFile> {
  const directory = await mkdtemp(join(tmpdir(), 'pb-conformance-'));
  t.teardown(() => rm(directory, { recursive: true, force: true }));
  const document: Record<string, unknown> = {
    module_id: moduleId,
    parking_id: 7,
    direction: 'entrance',
    mac_address:
      `00:07:80:CF:${(moduleId >> 8).toString(16).padStart(2, '0')}:${(moduleId & 0xff).toString(16).padStart(2, '0')}`.toUpperCase(),
    parking_key: randomBytes(16).toString('hex'),
    parking_key_next: null,
    box_key: randomBytes(16).toString('hex'),
    skew_seconds: 120,
    min_battery_mv: 3300,
    mqtt: { url: 'mqtt://127.0.0.1:1', username: `box-${moduleId}`, password: 'pw' },
    ...overrides,
  };
  const path = join(directory, `box-${moduleId}.json`);
  await writeFile(path, JSON.stringify(document));
  return { path, directory, document, provisioning: parseProvisioning(document) };
}

/** The simulator's barrier, fast: a cycle takes 700 ms. */
export const FAST_BARRIER = { openingMs: 200, openHoldMs: 300, closingMs: 200 } as const;
export const FAST_BARRIER_FLAGS = ['--opening-ms', '200', '--open-hold-ms', '300', '--closing-ms', '200'] as const;

/** Cases of the suite plus its four checks over the whole run. */
export const RUN_CHECKS = 4;

/** Rows of a whole run on this box: its cases, the SET_ISSUER that puts the
 * box's issuer keys back, and the checks. */
export function reportRows(provisioning: Pick<Provisioning, 'parkingKey'>): number {
  return casesFor(provisioning).length + 1 + RUN_CHECKS;
}

export interface JsonReport {
  results: {
    name: string;
    step: string;
    expected: string;
    got: string;
    result: 'pass' | 'fail' | 'skip';
    reason?: string;
    ms: number;
    wearing: boolean;
    /** With --capture-dir: the case's capture file. */
    capture?: string;
  }[];
  interrupted?: boolean;
  summary: {
    target: string;
    module_id: number;
    total: number;
    passed: number;
    failed: number;
    skipped: number;
    ms: number;
  };
}

/** Throws unless `xml` is well-formed enough for a JUnit reader: a
 * declaration, then properly nested elements, quoted attributes, and no
 * bare `<` or `&` in text. */
export function assertWellFormedXml(xml: string): void {
  const rest = xml.replace(/^<\?xml [^?]*\?>\s*/, '');
  const stack: string[] = [];
  const token = /<\/?([A-Za-z_][\w.-]*)((?:\s+[\w:.-]+="[^"<]*")*)\s*(\/?)>|([^<]+)/gy;
  let match: RegExpExecArray | null;
  let consumed = 0;
  while ((match = token.exec(rest)) !== null) {
    consumed = token.lastIndex;
    const [whole, name, , selfClosing, text] = match;
    if (text !== undefined) {
      if (/&(?!(amp|lt|gt|quot|apos);)/.test(text)) throw new Error(`bare & in text: ${text}`);
      continue;
    }
    if (whole.startsWith('</')) {
      if (stack.pop() !== name) throw new Error(`</${String(name)}> closes nothing open`);
    } else if (selfClosing !== '/') {
      stack.push(name ?? '');
    }
  }
  if (consumed !== rest.length)
    throw new Error(`not XML at offset ${consumed}: ${rest.slice(consumed, consumed + 40)}`);
  if (stack.length > 0) throw new Error(`unclosed: ${stack.join(', ')}`);
}
