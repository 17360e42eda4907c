// `parkbench start --mqtt-url`: the bench on an external broker.
// Such a broker knows parkbench's accounts only from files it loaded
// (mosquitto's password_file and acl_file, `admin mqtt-acl`), so the
// accounts the bench uses keep their passwords from one start to the next
// (the embedded broker's bench issues fresh ones each start): the demo
// boxes' and the app stand-in's passwords are kept in the data folder, and
// a start checks that the broker takes them before anything connects.
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import mqtt from 'mqtt';
import type { Store } from '../api/db/store.js';
import { provisionBox, provisioningWithPassword } from '../api/boxes/provisioning.js';
import { ensureOperatorClient, mosquittoExport, operatorClientTakes } from '../api/mqtt/clients.js';
import { UnsafeTargetError, writeFileAtomic } from '../lib/atomic-file.js';
import type { ProvisioningFile } from '../lib/provisioning-file.js';
import type { Topics } from '../lib/mqtt-topics.js';
import { messageOf } from '../lib/message-of.js';
import { BenchStartError } from './errors.js';

export interface Login {
  username: string;
  password: string;
}

/** What is kept in the data folder (mode 0600): the passwords the broker was given. */
interface KeptPasswords {
  boxes: Record<string, string>;
  operator?: Login;
}

export const KEPT_PASSWORDS_FILE = 'external-mqtt.json';

function readKept(path: string): KeptPasswords {
  try {
    const kept = JSON.parse(readFileSync(path, 'utf8')) as Partial<KeptPasswords>;
    return {
      boxes: typeof kept.boxes === 'object' ? kept.boxes : {},
      ...(kept.operator ? { operator: kept.operator } : {}),
    };
  } catch {
    // None yet (a first start) or unreadable: fresh passwords, written below.
    return { boxes: {} };
  }
}

export interface ExternalAccounts {
  /** The demo boxes' provisioning files, pointing at the external broker. */
  provisioning: ProvisioningFile[];
  /** The app stand-in's operator account. */
  operator: Login;
}

/**
 * The demo boxes' and the app stand-in's accounts with the passwords kept
 * from an earlier start when they still match the stored hashes (fresh ones
 * otherwise, then kept), and with `aclOut`, mosquitto's files written there.
 */
export async function externalAccounts(options: {
  store: Store;
  dataDir: string;
  url: string;
  moduleIds: readonly number[];
  operatorName: string;
  operatorUsername: string;
  nowMs: number;
  topics: Topics;
  apiLogin: Login | undefined;
  aclOut: string | undefined;
}): Promise<ExternalAccounts> {
  const path = join(options.dataDir, KEPT_PASSWORDS_FILE);
  const kept = readKept(path);
  const provisioning: ProvisioningFile[] = [];
  for (const moduleId of options.moduleIds) {
    const password = kept.boxes[String(moduleId)];
    const same =
      password === undefined
        ? undefined
        : await provisioningWithPassword(options.store, moduleId, options.url, password);
    if (same !== undefined) {
      provisioning.push(same);
      continue;
    }
    const file = await provisionBox(options.store, moduleId, options.url);
    kept.boxes[String(moduleId)] = file.mqtt.password;
    provisioning.push(file);
  }
  let operator = kept.operator;
  if (
    operator?.username !== options.operatorUsername ||
    !(await operatorClientTakes(options.store, operator.username, operator.password))
  ) {
    operator = await ensureOperatorClient(options.store, options.operatorName, options.operatorUsername, options.nowMs);
    kept.operator = operator;
  }
  try {
    mkdirSync(options.dataDir, { recursive: true });
    await writeFileAtomic(path, `${JSON.stringify(kept, null, 2)}\n`, { mode: 0o600 });
    if (options.aclOut !== undefined) {
      const exported = await mosquittoExport(options.store, options.topics, options.apiLogin);
      mkdirSync(options.aclOut, { recursive: true });
      const passwordFile = join(options.aclOut, 'passwords');
      await writeFileAtomic(passwordFile, exported.passwords, { mode: 0o600 });
      await writeFileAtomic(join(options.aclOut, 'acl'), exported.acl, { mode: 0o644 });
    }
  } catch (error) {
    throw new BenchStartError(
      `cannot keep the bench's MQTT accounts: ${messageOf(error)}`,
      undefined,
      error instanceof UnsafeTargetError,
    );
  }
  return { provisioning, operator };
}

/** CONNACK codes of a refused login (MQTT 3.1.1: 4, 5; MQTT 5: 134, 135). */
const REFUSED = new Set([4, 5, 134, 135]);

/**
 * Logs in to the broker as each account and leaves: refuses to start, with
 * what to do, when the broker does not take one (it has not loaded
 * parkbench's accounts) or cannot be reached.
 */
export async function checkLogins(url: string, logins: readonly Login[], aclOut: string | undefined): Promise<void> {
  for (const login of logins) {
    try {
      const client = await mqtt.connectAsync(url, { ...login, reconnectPeriod: 0, connectTimeout: 5_000 });
      await client.endAsync(true);
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (typeof code === 'number' && REFUSED.has(code)) {
        const load =
          aclOut === undefined
            ? 'export them (--mqtt-acl-out DIR, or parkbench admin mqtt-acl --format mosquitto --out DIR)'
            : `load the files written to ${aclOut}`;
        throw new BenchStartError(
          `the MQTT broker at ${url} refused ${login.username}: it does not have the bench's accounts yet; ${load} into it (mosquitto.conf: password_file DIR/passwords, acl_file DIR/acl; then kill -HUP its process) and start again (the passwords stay the same)`,
          'mqttUrl',
          true,
        );
      }
      throw new BenchStartError(`cannot reach the MQTT broker at ${url}: ${messageOf(error)}`, 'mqttUrl', false);
    }
  }
}
