// Where and as whom a conformance run's MQTT target logs in: the API's own
// broker, always, so a run reaches every box the API reaches.
// - Embedded broker: the URL it listens on, as the operator account the
//   service owns for its runs (`op-parkbench-conformance`, made on the first
//   run, a fresh password each API process; only its hash is stored, as for
//   every account: api/mqtt/clients.ts ensureOperatorClient).
// - External broker (MQTT_URL): MQTT_URL as the API's own login
//   (MQTT_USERNAME / MQTT_PASSWORD): an operator account's password is kept
//   only as a hash, so it could not be given to mosquitto (`admin mqtt
//   export`) and used here too. The API's ACL (api/mqtt/acl.ts, role api)
//   reads every topic and writes box commands: what the target needs.
import type { Clock } from '../../lib/clock.js';
import type { ApiConfig } from '../config/index.js';
import type { Store } from '../db/store.js';
import { ensureOperatorClient, mqttUsernameOf } from '../mqtt/index.js';

export interface SuiteLogin {
  readonly url: string;
  readonly username?: string;
  readonly password?: string;
}

export const CONFORMANCE_OPERATOR_NAME = 'parkbench conformance';
/** `op-parkbench-conformance`: the operator MQTT account of the runs on the embedded broker. */
export const CONFORMANCE_OPERATOR_USERNAME = mqttUsernameOf('operator', CONFORMANCE_OPERATOR_NAME);

export interface SuiteLoginDeps {
  store: Store;
  clock: Clock;
  config: Pick<ApiConfig, 'mqttUrl' | 'mqttUsername' | 'mqttPassword'>;
}

export class SuiteLogins {
  #embedded: Promise<{ username: string; password: string }> | undefined;

  constructor(private readonly deps: SuiteLoginDeps) {}

  /** The login of a run; `brokerUrl` is the running MQTT service's (the embedded broker's own port). */
  async loginFor(brokerUrl: string): Promise<SuiteLogin> {
    const { config } = this.deps;
    if (config.mqttUrl !== undefined) {
      return {
        url: config.mqttUrl,
        ...(config.mqttUsername === undefined ? {} : { username: config.mqttUsername }),
        ...(config.mqttPassword === undefined ? {} : { password: config.mqttPassword }),
      };
    }
    // Once a process: each call would store a new hash (and a password hash is slow on purpose).
    this.#embedded ??= ensureOperatorClient(
      this.deps.store,
      CONFORMANCE_OPERATOR_NAME,
      CONFORMANCE_OPERATOR_USERNAME,
      this.deps.clock.now(),
    ).catch((error: unknown) => {
      this.#embedded = undefined; // the next run tries again
      throw error;
    });
    return { url: brokerUrl, ...(await this.#embedded) };
  }
}
